// A bucket's fixed array of slots, every slot starting as Model{} (empty).
//
// For a model whose empty value is all zero bytes (the common case: ids, MMR
// and attributes that are 0 when empty) the array comes from calloc and is
// never written at creation: the kernel hands out zero pages as slots are
// first touched. A restart that lays out a cache of a million slots then
// pays for the pages its players land on, not for the whole cache up front
// (docs/performance.md, restore). Other models get `new Model[n]()`.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

namespace mm {

template <class Model>
class slot_array {
 public:
  slot_array() = default;
  explicit slot_array(std::size_t n) : size_(n) {
    if (n == 0) return;
    if constexpr (zero_fillable) {
      if (empty_is_zero_bytes()) {
        void* p = std::calloc(n, sizeof(Model));
        if (p == nullptr) throw std::bad_alloc();
        data_ = std::unique_ptr<Model[], release>(static_cast<Model*>(p), release{true});
        return;
      }
    }
    data_ = std::unique_ptr<Model[], release>(new Model[n](), release{false});
  }
  slot_array(slot_array&&) noexcept = default;
  slot_array& operator=(slot_array&&) noexcept = default;
  slot_array(const slot_array& o) : slot_array(o.size_) { std::copy(o.begin(), o.end(), begin()); }
  slot_array& operator=(const slot_array& o) {
    if (this != &o) *this = slot_array(o);
    return *this;
  }

  std::size_t size() const { return size_; }
  Model& operator[](std::size_t i) { return data_[i]; }
  const Model& operator[](std::size_t i) const { return data_[i]; }
  Model* begin() { return data_.get(); }
  Model* end() { return data_.get() + size_; }
  const Model* begin() const { return data_.get(); }
  const Model* end() const { return data_.get() + size_; }

 private:
  static constexpr bool zero_fillable =
      std::is_trivially_copyable_v<Model> && std::is_trivially_destructible_v<Model>;

  // Whether Model{} is all zero bytes (checked once per model type). A
  // value-initialized aggregate has zeroed padding; if a model's own
  // constructor leaves padding unset the check may fail, and the array is
  // then filled the ordinary way: never wrong, at worst not lazy.
  static bool empty_is_zero_bytes() {
    static const bool zero = [] {
      const Model empty{};
      unsigned char bytes[sizeof(Model)];
      std::memcpy(bytes, &empty, sizeof(Model));
      for (unsigned char b : bytes)
        if (b != 0) return false;
      return true;
    }();
    return zero;
  }

  struct release {
    bool from_calloc = false;
    void operator()(Model* p) const {
      if (from_calloc)
        std::free(p);
      else
        delete[] p;
    }
  };

  std::unique_ptr<Model[], release> data_;
  std::size_t size_ = 0;
};

}  // namespace mm
