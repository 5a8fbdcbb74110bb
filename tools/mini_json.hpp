// A minimal JSON reader: parses a whole text into a tree, or throws with the offset of the
// first error. The tests use it to check that write_trace() emits valid JSON, and
// heist-bench to render traces as SVG timelines. Not a general-purpose parser (no \u
// decoding).
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace heist_tools {

struct json {
  enum class kind { null, boolean, number, string, array, object } type = kind::null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<json> items;
  std::map<std::string, json> fields;

  const json& operator[](const std::string& key) const {
    auto it = fields.find(key);
    if (it == fields.end()) throw std::runtime_error("missing key " + key);
    return it->second;
  }
  bool has(const std::string& key) const { return fields.count(key) != 0; }
};

class json_parser {
 public:
  explicit json_parser(const std::string& text) : m_s(text) {}
  json parse() {
    json v = value();
    ws();
    if (m_i != m_s.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string("json: ") + what + " at offset " + std::to_string(m_i));
  }
  void ws() {
    while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])))
      ++m_i;
  }
  char peek() {
    ws();
    if (m_i >= m_s.size()) fail("unexpected end");
    return m_s[m_i];
  }
  void expect(char c) {
    if (peek() != c) fail("unexpected character");
    ++m_i;
  }
  json value() {
    const char c = peek();
    json v;
    if (c == '{') {
      v.type = json::kind::object;
      ++m_i;
      if (peek() == '}') return ++m_i, v;
      for (;;) {
        json key = string_value();
        expect(':');
        v.fields[key.str] = value();
        if (peek() == ',') {
          ++m_i;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.type = json::kind::array;
      ++m_i;
      if (peek() == ']') return ++m_i, v;
      for (;;) {
        v.items.push_back(value());
        if (peek() == ',') {
          ++m_i;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') return string_value();
    if (m_s.compare(m_i, 4, "true") == 0)
      return m_i += 4, v.type = json::kind::boolean, v.b = true, v;
    if (m_s.compare(m_i, 5, "false") == 0) return m_i += 5, v.type = json::kind::boolean, v;
    if (m_s.compare(m_i, 4, "null") == 0) return m_i += 4, v;
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      char* end = nullptr;
      v.num = std::strtod(m_s.c_str() + m_i, &end);
      if (end == m_s.c_str() + m_i) fail("bad number");
      m_i = static_cast<std::size_t>(end - m_s.c_str());
      v.type = json::kind::number;
      return v;
    }
    fail("unexpected value");
  }
  json string_value() {
    expect('"');
    json v;
    v.type = json::kind::string;
    while (m_i < m_s.size() && m_s[m_i] != '"') {
      if (static_cast<unsigned char>(m_s[m_i]) < 0x20) fail("control character in string");
      if (m_s[m_i] == '\\') {
        ++m_i;
        if (m_i >= m_s.size()) fail("bad escape");
        if (m_s[m_i] == 'u') {
          if (m_i + 4 >= m_s.size()) fail("bad unicode escape");
          m_i += 4;
          v.str += '?';
        } else {
          v.str += m_s[m_i];
        }
        ++m_i;
        continue;
      }
      v.str += m_s[m_i++];
    }
    expect('"');
    return v;
  }

  const std::string& m_s;
  std::size_t m_i = 0;
};

inline json parse_json(const std::string& text) {
  return json_parser(text).parse();
}

}  // namespace heist_tools
