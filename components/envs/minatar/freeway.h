// MinAtar's Freeway: the chicken, in column 4, crosses eight lanes of cars from the bottom row
// to the top one, moving up or down at most once every 3 steps; +1 each time it reaches the
// top, when it goes back to the bottom and the cars get new random speeds and directions; a
// car that meets it sends it back to the bottom. The package ends the episode on its 2501st
// step (the one that takes its timer of 2500 below 0); the limit of 2500 steps (gymnax's)
// truncates it one step before. No difficulty ramping. The
// rules, order of updates and quirks are the `minatar` package's (environments/freeway.py):
// the chicken is checked against each car in lane order, before and after the car moves, so
// a hit in one lane sends it to the bottom before the later lanes are checked; a crossing
// re-draws the speeds but leaves each car where it is.
#pragma once
#include <array>
#include <cstdint>
#include <cstdlib>

#include "minatar.h"

namespace metagraph::minatar {

class Freeway {
 public:
  static constexpr const char* kName = "Freeway";
  static constexpr int kChannels = 7;  // chicken, car, trails of speed 1..5
  static constexpr int kCars = 8;      // car i drives along row i + 1
  static constexpr int kWords = 3 + 3 * kCars;
  static constexpr int64_t kMaxSteps = 2500;
  // the package's minimal_action_set(), as gymnax has it by default
  static constexpr std::array<int, 3> kMinimalActions{kNoop, kUp, kDown};

  // Words: the chicken's row (0..9), its move timer (0..3), the package's termination timer
  // (2500 at a reset, -1 once the episode is over); then per car i, three words from kCar0 +
  // 3 * i: its x (0..9), its timer (0..5) and its speed (-5..-1 moving left, 1..5 right: it
  // moves once every |speed| + 1 steps).
  //
  // Capacity: the package makes exactly 8 cars, one per row 1..8, at each reset and only ever
  // changes their fields, so 8 x 3 words hold them all.
  enum Word { kPos, kMoveTimer, kTerminateTimer, kCar0 };
  enum CarWord { kX, kTimer, kSpeed };

  static void reset(double* w, Stream& random, const Settings&) {
    randomize_cars(w, random);
    for (int i = 0; i < kCars; ++i) w[kCar0 + 3 * i + kX] = 0;
    w[kPos] = 9;
    w[kMoveTimer] = kPlayerSpeed;
    w[kTerminateTimer] = kTimeLimit;
  }

  static double act(double* w, int action, Stream& random, const Settings&, bool& terminal) {
    // The package's game returns at once once terminal (the timer below 0): so does this, for
    // a state that a user set there.
    if (w[kTerminateTimer] < 0) {
      terminal = true;
      return 0;
    }
    double reward = 0;
    int pos = static_cast<int>(w[kPos]);
    int move_timer = static_cast<int>(w[kMoveTimer]);
    if (action == kUp && move_timer == 0) {
      move_timer = kPlayerSpeed;
      pos = std::max(0, pos - 1);
    } else if (action == kDown && move_timer == 0) {
      move_timer = kPlayerSpeed;
      pos = std::min(9, pos + 1);
    }

    // The crossing: +1, new speeds, back to the bottom.
    if (pos == 0) {
      reward += 1;
      randomize_cars(w, random);
      pos = 9;
    }

    // The cars.
    for (int i = 0; i < kCars; ++i) {
      double* car = w + kCar0 + 3 * i;
      if (car[kX] == 4 && i + 1 == pos) pos = 9;
      if (car[kTimer] == 0) {
        const int speed = static_cast<int>(car[kSpeed]);
        car[kTimer] = std::abs(speed);
        int x = static_cast<int>(car[kX]) + (speed > 0 ? 1 : -1);
        if (x < 0) x = 9;
        else if (x > 9) x = 0;
        car[kX] = x;
        if (x == 4 && i + 1 == pos) pos = 9;
      } else {
        car[kTimer] -= 1;
      }
    }

    // The timers.
    w[kPos] = pos;
    w[kMoveTimer] = move_timer - (move_timer > 0 ? 1 : 0);
    w[kTerminateTimer] -= 1;
    if (w[kTerminateTimer] < 0) terminal = true;
    return reward;
  }

  template <class T>
  static void observe(const double* w, const Planes<T>& planes) {
    planes.set(static_cast<int>(w[kPos]), 4, 0);
    for (int i = 0; i < kCars; ++i) {
      const double* car = w + kCar0 + 3 * i;
      const int x = static_cast<int>(car[kX]), speed = static_cast<int>(car[kSpeed]);
      planes.set(i + 1, x, 1);
      int back = speed > 0 ? x - 1 : x + 1;
      if (back < 0) back = 9;
      else if (back > 9) back = 0;
      planes.set(i + 1, back, 1 + std::abs(speed));  // speed k's trail is channel 1 + k
    }
  }

  static bool valid(const double* w) {
    if (!(whole(w[kPos], 0, 9) && whole(w[kMoveTimer], 0, kPlayerSpeed) &&
          whole(w[kTerminateTimer], -1, kTimeLimit)))
      return false;
    for (int i = 0; i < kCars; ++i) {
      const double* car = w + kCar0 + 3 * i;
      if (!(whole(car[kX], 0, 9) && whole(car[kTimer], 0, 5) && whole(car[kSpeed], -5, 5) &&
            car[kSpeed] != 0))
        return false;
    }
    return true;
  }

 private:
  static constexpr int kPlayerSpeed = 3, kTimeLimit = 2500;

  // The package's _randomize_cars: speeds = randint(1, 6, 8) (8 draws in order), then
  // directions = sign(rand(8) - 0.5) (8 more); each car's timer becomes |speed|.
  static void randomize_cars(double* w, Stream& random) {
    int speeds[kCars];
    for (int i = 0; i < kCars; ++i) speeds[i] = random.randint(1, 6);
    for (int i = 0; i < kCars; ++i) {
      // np.sign(u - 0.5) is 0 for u == 0.5 exactly (a speed-0 car the package cannot draw
      // the trail of); here u == 0.5 counts as +1, the only difference, at odds of 2^-53.
      const double u = random.rand();
      const int speed = u < 0.5 ? -speeds[i] : speeds[i];
      w[kCar0 + 3 * i + kTimer] = std::abs(speed);
      w[kCar0 + 3 * i + kSpeed] = speed;
    }
  }
};

}  // namespace metagraph::minatar
