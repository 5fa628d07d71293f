// Reading an input file the user named (a hardware description, a model, a trace, a run spec, a
// placement, a cache entry): never blocks on a FIFO nobody writes to, never reads a directory or a
// block device, stops at a size limit, and takes gzip-compressed files (every member, nothing after
// them). Errors are one line naming the file.
#pragma once

#include <cstddef>
#include <string>

namespace nmpsim::base {

/// Largest input accepted, after decompression: 1 GiB of text.
inline constexpr size_t kMaxInputBytes = size_t{1} << 30;

/// Refuses a path that cannot name a file: empty, or with a NUL byte (which would cut it short).
/// Throws InputError "<what>: ...".
void check_path_text(const std::string& path, const std::string& what);

/// Whether `path` names something that exists and is not a directory (without opening it, so a FIFO
/// never blocks): a name that might be a preset is taken as a file when this holds.
bool names_a_file(const std::string& path);

/// The whole file as text (gzip decompressed), at most `max_bytes`. Regular files, character devices
/// and FIFOs are read (a FIFO without a writer reads as empty, it does not block); directories, block
/// devices and sockets are refused. Throws InputError naming the file.
std::string read_input_file(const std::string& path, size_t max_bytes = kMaxInputBytes);

/// `bytes` decompressed if they are gzip (magic 1f 8b), else `bytes` themselves. Every member of a
/// multi-member gzip is read; anything after the last member that is not another member is an error,
/// as is corrupt or truncated data. Throws InputError naming `where`.
std::string gunzip_if_compressed(std::string bytes, const std::string& where, size_t max_bytes = kMaxInputBytes);

}  // namespace nmpsim::base
