// Deliberate bugs that prove verification can fail, compiled only into test instances. A
// production instance's traits (DecodeTraits) name no fault; a test wraps them in WithFault
// (tests/broken_kernels.cuh), and the kernels ask injected_fault<T>() where a fault would act.
#pragma once

#include <type_traits>

namespace mha {

enum class Fault : int {
  kNone = 0,
  kReduceNaturalExp = 1,  // the reduce weighs partitions with e^x instead of 2^x (unit mix-up)
  kDropLastTile = 2,      // the last key tile of each partition is never read
  kSinkPerPartition = 3,  // every partition adds the sink to its own sum
};

// Traits with a fault: the production ones and a fault the test instance injects into them.
template <class Traits, Fault kFault_>
struct WithFault : Traits {
  static constexpr Fault kFault = kFault_;
};

template <class T, class = void>
struct InjectedFault : std::integral_constant<Fault, Fault::kNone> {};
template <class T>
struct InjectedFault<T, std::void_t<decltype(T::kFault)>>
    : std::integral_constant<Fault, T::kFault> {};

// The fault a test instance injects into the kernels of traits T; kNone for every production
// instance.
template <class T>
constexpr Fault injected_fault() {
  return InjectedFault<T>::value;
}

}  // namespace mha
