// The MPI examples' command line: "--name value" pairs. Every name must be one the program
// knows, every count a whole number within its range, every text one of its choices; the
// first that is not gives a message naming the option and the value, which the program's
// rank 0 prints before every rank ends with status 2 (an unknown option used to be ignored,
// and "--size abc" read as 0).
#pragma once

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace example {

struct count_option {
  const char* name;  // "--size"
  long* value;
  long min, max;
};

struct text_option {
  const char* name;  // "--mode"
  std::string* value;
  std::vector<std::string> choices;  // empty: any text
};

// Empty when every option was good (the values set), else what was wrong.
inline std::string parse_options(int argc, char** argv, const std::vector<count_option>& counts,
                                 const std::vector<text_option>& texts) {
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (i + 1 >= argc) return name + " needs a value";
    const std::string v = argv[i + 1];
    bool known = false;
    for (const count_option& c : counts) {
      if (name != c.name) continue;
      known = true;
      char* end = nullptr;
      errno = 0;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno == ERANGE) {
        return name + ": '" + v + "' is not a whole number";
      }
      if (n < c.min || n > c.max) {
        return name + ": " + v + " is outside " + std::to_string(c.min) + ".." +
               std::to_string(c.max);
      }
      *c.value = n;
    }
    for (const text_option& t : texts) {
      if (name != t.name) continue;
      known = true;
      bool allowed = t.choices.empty();
      for (const std::string& c : t.choices)
        allowed = allowed || c == v;
      if (!allowed) {
        std::string list;
        for (const std::string& c : t.choices)
          list += (list.empty() ? "" : ", ") + c;
        return name + ": '" + v + "' is not one of " + list;
      }
      *t.value = v;
    }
    if (!known) return "unknown option " + name;
  }
  return {};
}

}  // namespace example
