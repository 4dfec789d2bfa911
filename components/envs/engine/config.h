// A task's runtime configuration: the keyword arguments its Python spec passed, by name, each a
// bool, an integer, a number, a string or a list of numbers. The getters check the type and the
// range and throw std::invalid_argument naming the task and the argument, so that a value no
// Python check caught (2**31 frame skips, 1e400) is one clear error, never a std::bad_cast.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace metagraph::engine {

class Config {
 public:
  using Value = std::variant<bool, int64_t, double, std::string, std::vector<double>>;

  Config() = default;
  Config(std::string task, std::map<std::string, Value> values)
      : task_(std::move(task)), values_(std::move(values)) {}

  const std::string& task() const { return task_; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::map<std::string, Value>& values() const { return values_; }

  bool flag(const std::string& key) const {
    const Value& v = at(key);
    if (const bool* b = std::get_if<bool>(&v)) return *b;
    throw error(key, "must be a bool");
  }
  // An integer in [lo, hi].
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    const Value& v = at(key);
    const int64_t* i = std::get_if<int64_t>(&v);
    if (i == nullptr) throw error(key, "must be an int");
    if (*i < lo || *i > hi)
      throw error(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                           "], got " + std::to_string(*i));
    return *i;
  }
  // A finite number (an int is taken as its value).
  double number(const std::string& key) const {
    const double x = any_number(key);
    if (!std::isfinite(x)) throw error(key, "must be finite, got " + std::to_string(x));
    return x;
  }
  // A number that may be infinite (bounds of a range), never NaN.
  double any_number(const std::string& key) const {
    const Value& v = at(key);
    double x;
    if (const double* d = std::get_if<double>(&v)) x = *d;
    else if (const int64_t* i = std::get_if<int64_t>(&v)) x = static_cast<double>(*i);
    else throw error(key, "must be a number");
    if (std::isnan(x)) throw error(key, "must not be NaN");
    return x;
  }
  const std::string& text(const std::string& key) const {
    const Value& v = at(key);
    if (const std::string* s = std::get_if<std::string>(&v)) return *s;
    throw error(key, "must be a str");
  }
  // A pair (low, high) of numbers with low <= high (either may be infinite).
  std::pair<double, double> range(const std::string& key) const {
    const Value& v = at(key);
    const auto* list = std::get_if<std::vector<double>>(&v);
    if (list == nullptr || list->size() != 2) throw error(key, "must be a pair (low, high)");
    const double lo = (*list)[0], hi = (*list)[1];
    if (std::isnan(lo) || std::isnan(hi) || lo > hi)
      throw error(key, "must be a pair (low, high) with low <= high, got (" +
                           std::to_string(lo) + ", " + std::to_string(hi) + ")");
    return {lo, hi};
  }
  // Refuses any key outside `known` (a task that takes no arguments passes {}).
  void only(const std::vector<std::string>& known) const {
    for (const auto& [key, value] : values_) {
      bool found = false;
      for (const auto& k : known) found = found || k == key;
      if (!found) throw error(key, "is not an argument of this task");
    }
  }
  std::invalid_argument error(const std::string& key, const std::string& what) const {
    return std::invalid_argument(task_ + ": " + key + " " + what);
  }

 private:
  const Value& at(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw error(key, "is missing");
    return it->second;
  }
  std::string task_;
  std::map<std::string, Value> values_;
};

}  // namespace metagraph::engine
