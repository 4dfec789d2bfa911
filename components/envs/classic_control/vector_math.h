// sin and cos in two flavours the environment cores are templated on:
//   LibMath:  the C library's (any argument);
//   FastMath: branch-free and inline, so a loop over a structure of arrays vectorizes (SIMD).
//             fdlibm's kernels after a three-part Cody-Waite reduction: within about 1 ulp of
//             the C library for |x| <= kRange. Callers check the range and use LibMath beyond.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace metagraph::classic_control {

struct LibMath {
  static double sin(double x) { return std::sin(x); }
  static double cos(double x) { return std::cos(x); }
};

struct FastMath {
  static constexpr double kRange = 1e5;  // the reduction below is exact to here

  static inline void sin_cos(double x, double* sin_out, double* cos_out) {
    constexpr double kInvPio2 = 6.36619772367581382433e-01;
    constexpr double kPio2_1 = 1.57079632673412561417e+00;   // first 33 bits of pi/2
    constexpr double kPio2_2 = 6.07710050630396597660e-11;   // next 33 bits
    constexpr double kPio2_3 = 2.02226624879595063154e-21;   // the rest
    constexpr double kRound = 0x1.8p52;  // adding it rounds to an integer held in the low bits
    const double shifted = x * kInvPio2 + kRound;
    const double n = shifted - kRound;
    uint64_t bits;
    std::memcpy(&bits, &shifted, sizeof bits);
    const uint64_t quadrant = bits & 3;  // n mod 4, for negative n too
    const double r = ((x - n * kPio2_1) - n * kPio2_2) - n * kPio2_3;  // |r| <= pi/4
    const double s = kernel_sin(r), c = kernel_cos(r);
    const double sin_r = (quadrant & 1) ? c : s;
    const double cos_r = (quadrant & 1) ? s : c;
    *sin_out = (quadrant & 2) ? -sin_r : sin_r;
    *cos_out = ((quadrant + 1) & 2) ? -cos_r : cos_r;
  }
  static double sin(double x) {
    double s, c;
    sin_cos(x, &s, &c);
    return s;
  }
  static double cos(double x) {
    double s, c;
    sin_cos(x, &s, &c);
    return c;
  }

 private:
  // fdlibm's __kernel_sin / __kernel_cos on [-pi/4, pi/4] (no tail term).
  static inline double kernel_sin(double x) {
    constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                     S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                     S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    const double z = x * x, v = z * x;
    const double r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    return x + v * (S1 + z * r);
  }
  static inline double kernel_cos(double x) {
    constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                     C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                     C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    const double z = x * x;
    const double r = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    const double hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * r);
  }
};

}  // namespace metagraph::classic_control
