// A JSON Schema validator for the tests, covering the keywords docs/openapi.json uses (no
// library that fits is packaged for Debian 12; http_openapi_test.cpp shows what it rejects).
//
// Supported: $ref (JSON pointers into the root document, siblings applied too), type (one or
// a list, so ["string", "null"] is nullable), enum, const, properties, required,
// additionalProperties (false or a schema), items, minItems, maxItems, minProperties,
// maxProperties, minLength, maxLength (in code points), minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, pattern (ECMAScript, unanchored), allOf, anyOf, oneOf, not. `format` and
// the annotations (description, title, examples, …) are ignored. Any other keyword is
// reported as unsupported rather than skipped, so a schema never claims more than is checked.
//
// `integer` means a JSON integer as written: 1.0 is a number but not an integer, as the API's
// own readers say (API.md "Conventions"). Integers compare exactly over the whole signed and
// unsigned 64-bit range. Thread-compatible.
#pragma once

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace onceorder::testing {

class SchemaValidator {
 public:
  using json = nlohmann::json;

  // `root` is the document "#/…" references point into; it must outlive the validator.
  explicit SchemaValidator(const json& root) : root_(root) {}

  // Every way `value` breaks `schema`, each "<where>: <what>" (where is a JSON pointer into
  // `value`, "" for the whole); empty when it conforms.
  std::vector<std::string> validate(const json& value, const json& schema) const {
    std::vector<std::string> errors;
    check(value, schema, "", errors, 0);
    return errors;
  }

  // The keywords of `schema` and of every schema inside it that validate() would report as
  // unsupported.
  static std::vector<std::string> unsupported_keywords(const json& schema) {
    std::vector<std::string> out;
    if (!schema.is_object()) return out;
    for (const auto& [keyword, sub] : schema.items()) {
      if (!applied().contains(keyword) && !is_annotation(keyword)) out.push_back(keyword);
      std::vector<const json*> inner;
      if (keyword == "properties" && sub.is_object()) {
        for (const auto& [_, p] : sub.items()) inner.push_back(&p);
      } else if ((keyword == "allOf" || keyword == "anyOf" || keyword == "oneOf") &&
                 sub.is_array()) {
        for (const json& p : sub) inner.push_back(&p);
      } else if (keyword == "items" || keyword == "not" || keyword == "additionalProperties") {
        inner.push_back(&sub);
      }
      for (const json* p : inner) {
        for (std::string& k : unsupported_keywords(*p)) out.push_back(std::move(k));
      }
    }
    return out;
  }

  // The schema `ref` ("#/components/schemas/Order") points at, or nullptr.
  const json* resolve(std::string_view ref) const {
    if (!ref.starts_with("#")) return nullptr;
    try {
      const json::json_pointer pointer{std::string(ref.substr(1))};
      return root_.contains(pointer) ? &root_.at(pointer) : nullptr;
    } catch (const json::exception&) {
      return nullptr;
    }
  }

 private:
  static constexpr int kMaxDepth = 64;  // a reference cycle without progress

  // A JSON integer as sign and magnitude: exact over int64 and uint64 alike.
  struct Integer {
    bool negative = false;
    std::uint64_t magnitude = 0;
  };
  static Integer integer_of(const json& j) {
    if (j.is_number_unsigned()) return {false, j.get<std::uint64_t>()};
    const std::int64_t v = j.get<std::int64_t>();
    if (v >= 0) return {false, static_cast<std::uint64_t>(v)};
    return {true, static_cast<std::uint64_t>(-(v + 1)) + 1};
  }
  // -1, 0 or 1 as a is below, equal to or above b (both numbers).
  static int compare(const json& a, const json& b) {
    if (a.is_number_integer() && b.is_number_integer()) {
      const Integer x = integer_of(a), y = integer_of(b);
      if (x.negative != y.negative) return x.negative ? -1 : 1;
      if (x.magnitude == y.magnitude) return 0;
      const bool smaller = x.magnitude < y.magnitude;
      return (smaller != x.negative) ? -1 : 1;
    }
    const double x = a.get<double>(), y = b.get<double>();
    return x < y ? -1 : x > y ? 1 : 0;
  }

  static bool has_type(const json& v, std::string_view type) {
    if (type == "null") return v.is_null();
    if (type == "boolean") return v.is_boolean();
    if (type == "string") return v.is_string();
    if (type == "array") return v.is_array();
    if (type == "object") return v.is_object();
    if (type == "number") return v.is_number();
    if (type == "integer") return v.is_number_integer();
    return false;
  }

  static size_t code_points(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }

  static std::string escape_pointer(const std::string& key) {
    std::string out;
    for (char c : key) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
    return out;
  }

  static const std::set<std::string, std::less<>>& applied() {
    static const std::set<std::string, std::less<>> kApplied = {"$ref",
                                                                "type",
                                                                "enum",
                                                                "const",
                                                                "properties",
                                                                "required",
                                                                "additionalProperties",
                                                                "items",
                                                                "minItems",
                                                                "maxItems",
                                                                "minProperties",
                                                                "maxProperties",
                                                                "minLength",
                                                                "maxLength",
                                                                "minimum",
                                                                "maximum",
                                                                "exclusiveMinimum",
                                                                "exclusiveMaximum",
                                                                "pattern",
                                                                "allOf",
                                                                "anyOf",
                                                                "oneOf",
                                                                "not"};
    return kApplied;
  }

  static bool is_annotation(const std::string& keyword) {
    static const std::set<std::string, std::less<>> kIgnored = {
        "description", "title",    "format",    "examples",     "example", "default",
        "deprecated",  "readOnly", "writeOnly", "$comment",     "$schema", "$id",
        "$anchor",     "$defs",    "nullable",  "discriminator"};
    return kIgnored.contains(keyword);
  }

  bool conforms(const json& v, const json& s, int depth) const {
    std::vector<std::string> errors;
    check(v, s, "", errors, depth);
    return errors.empty();
  }

  void check(const json& v, const json& s, const std::string& at, std::vector<std::string>& out,
             int depth) const {
    auto fail = [&](const std::string& what) { out.push_back(at + ": " + what); };
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail("no value is allowed here");
      return;
    }
    if (!s.is_object()) {
      fail("the schema is not an object or a boolean");
      return;
    }
    if (depth > kMaxDepth) {
      fail("schema nesting too deep (a reference cycle?)");
      return;
    }
    for (const auto& [keyword, _] : s.items()) {
      if (!applied().contains(keyword) && !is_annotation(keyword)) {
        fail("unsupported schema keyword '" + keyword + "'");
      }
    }

    if (auto it = s.find("$ref"); it != s.end()) {
      const json* target = it->is_string() ? resolve(it->get<std::string>()) : nullptr;
      if (!target) {
        fail("unresolvable $ref " + it->dump());
      } else {
        check(v, *target, at, out, depth + 1);
      }
    }
    if (auto it = s.find("type"); it != s.end()) {
      bool ok = false;
      if (it->is_string()) {
        ok = has_type(v, it->get<std::string>());
      } else {
        for (const json& t : *it) ok = ok || (t.is_string() && has_type(v, t.get<std::string>()));
      }
      if (!ok) fail("expected type " + it->dump() + ", got " + v.dump());
    }
    if (auto it = s.find("enum"); it != s.end()) {
      bool ok = false;
      for (const json& e : *it) ok = ok || e == v;
      if (!ok) fail(v.dump() + " is not one of " + it->dump());
    }
    if (auto it = s.find("const"); it != s.end() && *it != v) {
      fail(v.dump() + " is not " + it->dump());
    }

    if (v.is_object()) check_object(v, s, at, out, depth);
    if (v.is_array()) {
      if (auto it = s.find("minItems"); it != s.end() && v.size() < it->get<size_t>()) {
        fail("fewer than " + it->dump() + " items");
      }
      if (auto it = s.find("maxItems"); it != s.end() && v.size() > it->get<size_t>()) {
        fail("more than " + it->dump() + " items");
      }
      if (auto it = s.find("items"); it != s.end()) {
        for (size_t i = 0; i < v.size(); ++i) {
          check(v[i], *it, at + "/" + std::to_string(i), out, depth + 1);
        }
      }
    }
    if (v.is_string()) {
      const std::string& text = v.get_ref<const std::string&>();
      if (auto it = s.find("minLength"); it != s.end() && code_points(text) < it->get<size_t>()) {
        fail("shorter than " + it->dump() + " characters");
      }
      if (auto it = s.find("maxLength"); it != s.end() && code_points(text) > it->get<size_t>()) {
        fail("longer than " + it->dump() + " characters");
      }
      if (auto it = s.find("pattern"); it != s.end()) {
        if (!std::regex_search(text, std::regex(it->get<std::string>(), std::regex::ECMAScript))) {
          fail(v.dump() + " does not match " + it->dump());
        }
      }
    }
    if (v.is_number()) {
      if (auto it = s.find("minimum"); it != s.end() && compare(v, *it) < 0) {
        fail(v.dump() + " is below the minimum " + it->dump());
      }
      if (auto it = s.find("maximum"); it != s.end() && compare(v, *it) > 0) {
        fail(v.dump() + " is above the maximum " + it->dump());
      }
      if (auto it = s.find("exclusiveMinimum"); it != s.end() && compare(v, *it) <= 0) {
        fail(v.dump() + " is not above " + it->dump());
      }
      if (auto it = s.find("exclusiveMaximum"); it != s.end() && compare(v, *it) >= 0) {
        fail(v.dump() + " is not below " + it->dump());
      }
    }

    if (auto it = s.find("allOf"); it != s.end()) {
      for (const json& sub : *it) check(v, sub, at, out, depth + 1);
    }
    if (auto it = s.find("anyOf"); it != s.end()) {
      bool any = false;
      for (const json& sub : *it) any = any || conforms(v, sub, depth + 1);
      if (!any) fail("matches none of anyOf " + summary(v, *it, depth));
    }
    if (auto it = s.find("oneOf"); it != s.end()) {
      int matches = 0;
      for (const json& sub : *it) matches += conforms(v, sub, depth + 1) ? 1 : 0;
      if (matches != 1) {
        fail("matches " + std::to_string(matches) + " of oneOf, not exactly one " +
             summary(v, *it, depth));
      }
    }
    if (auto it = s.find("not"); it != s.end() && conforms(v, *it, depth + 1)) {
      fail(v.dump() + " matches the schema under 'not'");
    }
  }

  void check_object(const json& v, const json& s, const std::string& at,
                    std::vector<std::string>& out, int depth) const {
    auto fail = [&](const std::string& what) { out.push_back(at + ": " + what); };
    if (auto it = s.find("required"); it != s.end()) {
      for (const json& name : *it) {
        if (!v.contains(name.get<std::string>())) fail("missing member " + name.dump());
      }
    }
    if (auto it = s.find("minProperties"); it != s.end() && v.size() < it->get<size_t>()) {
      fail("fewer than " + it->dump() + " members");
    }
    if (auto it = s.find("maxProperties"); it != s.end() && v.size() > it->get<size_t>()) {
      fail("more than " + it->dump() + " members");
    }
    const json empty = json::object();
    const auto props_it = s.find("properties");
    const json& props = props_it != s.end() ? *props_it : empty;
    const auto extra = s.find("additionalProperties");
    for (const auto& [name, member] : v.items()) {
      const std::string where = at + "/" + escape_pointer(name);
      if (auto p = props.find(name); p != props.end()) {
        check(member, *p, where, out, depth + 1);
      } else if (extra != s.end()) {
        if (extra->is_boolean() && !extra->get<bool>()) {
          fail("member \"" + name + "\" is not allowed");
        } else {
          check(member, *extra, where, out, depth + 1);
        }
      }
    }
  }

  // Why `v` fails each alternative: for the messages of anyOf and oneOf.
  std::string summary(const json& v, const json& alternatives, int depth) const {
    std::string out = "[";
    for (const json& sub : alternatives) {
      std::vector<std::string> errors;
      check(v, sub, "", errors, depth + 1);
      out += errors.empty() ? "ok" : errors.front();
      out += "; ";
    }
    return out + "]";
  }

  const json& root_;
};

}  // namespace onceorder::testing
