// Tables of records addressed by index, with freed indices reused (no allocation per record once
// the table has grown to its peak).
#pragma once

#include <vector>

namespace nmpsim::base {

/// An index into `table` for a new record: the last freed one, else a new default-constructed slot.
/// The caller assigns the record.
template <class T, class Id>
Id take_slot(std::vector<T>& table, std::vector<Id>& free_list) {
  if (!free_list.empty()) {
    const Id id = free_list.back();
    free_list.pop_back();
    return id;
  }
  table.emplace_back();
  return static_cast<Id>(table.size() - 1);
}

}  // namespace nmpsim::base
