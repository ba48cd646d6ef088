//===- Json.h - A small JSON writer -----------------------------*- C++ -*-===//
//
// Internal to the runtime, which links no LLVM library (llvm::json is what
// the compiler uses). Writes one JSON value into a string, compactly (no
// spaces), as llvm::json::OStream does: objects and arrays are opened and
// closed, the writer puts the commas and the quotes. Strings are escaped
// per RFC 8259 (", \ and control characters; other bytes pass through as
// UTF-8); integers are written exactly; doubles with 9 significant digits
// (%.9g, enough to round-trip an f32), and as null when not finite, since
// JSON has no NaN or infinity.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_JSON_H
#define MEGAGRAPH_RUNTIME_SUPPORT_JSON_H

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

class JsonWriter {
public:
  /// Containers. Inside an object each value must follow a key().
  JsonWriter &objectBegin() { return open('{'); }
  JsonWriter &objectEnd() { return close('}'); }
  JsonWriter &arrayBegin() { return open('['); }
  JsonWriter &arrayEnd() { return close(']'); }
  /// The key of the next value of the enclosing object.
  JsonWriter &key(const std::string &name);

  JsonWriter &value(int64_t v);
  JsonWriter &value(uint64_t v);
  JsonWriter &value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter &value(double v);
  JsonWriter &value(bool v);
  JsonWriter &value(const std::string &s);
  JsonWriter &value(const char *s) { return value(std::string(s)); }
  JsonWriter &null();

  /// key(name) then value(v).
  template <typename T> JsonWriter &attribute(const std::string &name, T v) {
    key(name);
    return value(v);
  }
  /// key(name) then an array of `vs`.
  template <typename T>
  JsonWriter &attributeArray(const std::string &name,
                             const std::vector<T> &vs) {
    key(name);
    arrayBegin();
    for (const T &v : vs)
      value(v);
    return arrayEnd();
  }

  /// The text written so far.
  const std::string &str() const { return out; }

  /// `s` as a JSON string literal, quotes included.
  static std::string quote(const std::string &s);
  /// `v` as a JSON number (null when not finite).
  static std::string number(double v);

private:
  void beforeValue();
  JsonWriter &open(char bracket);
  JsonWriter &close(char bracket);

  std::string out;
  /// Per open container: true while it has no element yet.
  std::vector<bool> empty;
  bool afterKey = false;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_SUPPORT_JSON_H
