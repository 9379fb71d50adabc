#pragma once
// A stage kind's own part of a generic record: its spec in StageSpec, its
// plan in PlannedStage, its figures in StageReport. The generic code (the
// config reader, the planner, the executors, the statistics) holds and
// copies it without knowing its type; the kind that put it there takes it
// back by type (DESIGN §1b: a kind's data lives in stages/<kind>/).
#include <any>
#include <concepts>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "core/error.hpp"

namespace sigstream {

class KindData {
public:
  KindData() = default;
  template <class T>
  requires(!std::is_same_v<std::decay_t<T>, KindData>) explicit KindData(T value)
      : value_(std::move(value)), equal_(&equal<T>) {}

  [[nodiscard]] bool empty() const noexcept { return !value_.has_value(); }

  // The data if it is a T, else null.
  template <class T> [[nodiscard]] const T* find() const noexcept {
    return std::any_cast<T>(&value_);
  }
  template <class T> [[nodiscard]] T* find() noexcept { return std::any_cast<T>(&value_); }

  // The data as a T: a T's defaults while the record holds none (a record
  // made in code, field by field); another kind's data is an internal error.
  template <class T> [[nodiscard]] const T& get() const {
    if (const T* p = find<T>())
      return *p;
    if (empty()) {
      static const T defaults{};
      return defaults;
    }
    throw mismatch(typeid(T));
  }
  // The data as a T to fill in, made from a T's defaults if there is none.
  template <class T> [[nodiscard]] T& get() {
    if (T* p = find<T>())
      return *p;
    if (!empty())
      throw mismatch(typeid(T));
    equal_ = &equal<T>;
    return value_.emplace<T>();
  }

  // Same kind data: both empty, or the same type and equal (a kind's type
  // that has no operator== is never equal to another record's).
  friend bool operator==(const KindData& a, const KindData& b) {
    if (a.empty() || b.empty())
      return a.empty() && b.empty();
    return a.value_.type() == b.value_.type() && a.equal_ && a.equal_(a.value_, b.value_);
  }

private:
  [[nodiscard]] Error mismatch(const std::type_info& wanted) const {
    return internal_error(std::string("a stage's kind data is a ") + value_.type().name() +
                          ", not the " + wanted.name() + " asked for");
  }
  template <class T> static bool equal(const std::any& a, const std::any& b) {
    if constexpr (std::equality_comparable<T>)
      return *std::any_cast<T>(&a) == *std::any_cast<T>(&b);
    else
      return false;
  }
  std::any value_;
  bool (*equal_)(const std::any&, const std::any&) = nullptr;
};

} // namespace sigstream
