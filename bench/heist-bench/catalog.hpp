// What each workload key measures and which backends its family compares, for --list.
#pragma once

#include <string>

namespace bench {

// One line on what workload `key` measures; "" for an unknown key.
const char* what_it_measures(const std::string& key);
// The backends a family compares (the keys --backends takes, with what each is).
const char* backends_of_family(const std::string& family);

}  // namespace bench
