//===- Json.cpp - A small JSON writer -------------------------------------===//

#include "support/Json.h"

#include <cmath>
#include <cstdio>

namespace mgrt {

std::string JsonWriter::quote(const std::string &s) {
  std::string q = "\"";
  for (const char c : s) {
    switch (c) {
    case '"':
      q += "\\\"";
      break;
    case '\\':
      q += "\\\\";
      break;
    case '\b':
      q += "\\b";
      break;
    case '\f':
      q += "\\f";
      break;
    case '\n':
      q += "\\n";
      break;
    case '\r':
      q += "\\r";
      break;
    case '\t':
      q += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        q += buf;
      } else {
        q += c;
      }
    }
  }
  return q + "\"";
}

std::string JsonWriter::number(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void JsonWriter::beforeValue() {
  if (afterKey) {
    afterKey = false;
    return;
  }
  if (!empty.empty()) {
    if (!empty.back())
      out += ',';
    empty.back() = false;
  }
}

JsonWriter &JsonWriter::open(char bracket) {
  beforeValue();
  out += bracket;
  empty.push_back(true);
  return *this;
}

JsonWriter &JsonWriter::close(char bracket) {
  out += bracket;
  empty.pop_back();
  return *this;
}

JsonWriter &JsonWriter::key(const std::string &name) {
  beforeValue();
  out += quote(name);
  out += ':';
  afterKey = true;
  return *this;
}

JsonWriter &JsonWriter::value(int64_t v) {
  beforeValue();
  out += std::to_string(v);
  return *this;
}

JsonWriter &JsonWriter::value(uint64_t v) {
  beforeValue();
  out += std::to_string(v);
  return *this;
}

JsonWriter &JsonWriter::value(double v) {
  beforeValue();
  out += number(v);
  return *this;
}

JsonWriter &JsonWriter::value(bool v) {
  beforeValue();
  out += v ? "true" : "false";
  return *this;
}

JsonWriter &JsonWriter::value(const std::string &s) {
  beforeValue();
  out += quote(s);
  return *this;
}

JsonWriter &JsonWriter::null() {
  beforeValue();
  out += "null";
  return *this;
}

} // namespace mgrt
