#include "onceorder/core/redact.hpp"
#include "onceorder/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace onceorder {
namespace {

constexpr std::string_view kMask = "***";

using Span = std::pair<size_t, size_t>;  // [begin, end) of one password in the URL

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// postgresql://[user[:password]@]hosts[/db][?params]. Conservative: everything between
// the first ':' of the credentials and the last '@' before the query is hidden, so that a
// password holding '@', '/' or ':' is hidden whole whichever way libpq splits it.
void uri_spans(std::string_view url, size_t scheme_end, std::vector<Span>& out) {
  const size_t query = url.find('?', scheme_end);
  const std::string_view head = url.substr(0, query);
  const size_t at = head.rfind('@');
  if (at != std::string_view::npos && at > scheme_end) {
    const size_t colon = head.find(':', scheme_end);
    if (colon != std::string_view::npos && colon < at) out.emplace_back(colon + 1, at);
  }
  if (query == std::string_view::npos) return;
  size_t pos = query + 1;
  while (pos <= url.size()) {
    size_t amp = url.find('&', pos);
    if (amp == std::string_view::npos) amp = url.size();
    const std::string_view pair = url.substr(pos, amp - pos);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && iequals(pair.substr(0, eq), "password"))
      out.emplace_back(pos + eq + 1, amp);
    pos = amp + 1;
  }
}

// host=h password=secret dbname=d, values optionally single-quoted with \-escapes.
void keyword_spans(std::string_view s, std::vector<Span>& out) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const size_t key_begin = i;
    while (i < s.size() && s[i] != '=' && !is_space(s[i])) ++i;
    const std::string_view key = s.substr(key_begin, i - key_begin);
    while (i < s.size() && is_space(s[i])) ++i;
    if (i >= s.size() || s[i] != '=') {
      if (i == key_begin) ++i;  // never stall on a stray character
      continue;
    }
    ++i;  // '='
    while (i < s.size() && is_space(s[i])) ++i;
    const size_t value_begin = i;
    if (i < s.size() && s[i] == '\'') {
      ++i;
      while (i < s.size() && s[i] != '\'') i += s[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, s.size());
    } else {
      while (i < s.size() && !is_space(s[i])) i += s[i] == '\\' ? 2 : 1;
      i = std::min(i, s.size());
    }
    if (iequals(key, "password")) out.emplace_back(value_begin, i);
  }
}

std::vector<Span> password_spans(std::string_view url) {
  std::vector<Span> out;
  if (url.starts_with("sqlite:")) return out;  // a file path: nothing secret in it
  if (const size_t scheme = url.find("://"); scheme != std::string_view::npos) {
    uri_spans(url, scheme + 3, out);
  } else {
    keyword_spans(url, out);
  }
  return out;
}

// Best effort: libpq may quote the password as written or decoded.
std::string decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit_value(s[i + 1]) >= 0 &&
        hex_digit_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit_value(s[i + 1]) * 16 + hex_digit_value(s[i + 2]));
      i += 2;
    } else if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[++i];
    } else if (s[i] != '\'') {
      out += s[i];
    }
  }
  return out;
}

void replace_all(std::string& text, std::string_view what, std::string_view with) {
  if (what.empty()) return;
  for (size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + with.size())) {
    text.replace(pos, what.size(), with);
  }
}

}  // namespace

std::string redact_db_url(std::string_view url) {
  std::string out;
  size_t copied = 0;
  for (const auto& [begin, end] : password_spans(url)) {
    out.append(url.substr(copied, begin - copied));
    out.append(kMask);
    copied = end;
  }
  out.append(url.substr(copied));
  return out;
}

std::string redact_db_message(std::string_view message, std::string_view url) {
  std::string out(message);
  replace_all(out, url, redact_db_url(url));
  // Longest first, so that a shorter secret never leaves part of a longer one visible.
  std::vector<std::string> secrets;
  for (const auto& [begin, end] : password_spans(url)) {
    std::string raw(url.substr(begin, end - begin));
    secrets.push_back(decoded(raw));
    secrets.push_back(std::move(raw));
  }
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& s : secrets) replace_all(out, s, kMask);
  return out;
}

}  // namespace onceorder
