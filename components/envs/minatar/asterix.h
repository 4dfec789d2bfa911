// MinAtar's Asterix: the player moves in the four directions over rows 1..8 while enemies and
// gold, one per row, enter from the left or right edge and cross the board; +1 per gold
// picked up, and the episode ends when the player touches an enemy. Spawns and moves speed up
// every 102 steps (difficulty ramping). The rules, order of updates and quirks are the
// `minatar` package's (environments/asterix.py): a spawn comes before the player's move, and
// entities are checked against the player after that move and again after their own (so an
// entity spawned onto the player's cell meets it at once); the spawn's two random draws
// (side, gold) are made even when every row is taken; the ramp timer counts 100 down to -1
// before each ramp, so ramps come every 102 steps.
#pragma once
#include <array>
#include <cstdint>

#include "minatar.h"

namespace metagraph::minatar {

class Asterix {
 public:
  static constexpr const char* kName = "Asterix";
  static constexpr int kChannels = 4;  // player, enemy, trail, gold
  static constexpr int kSlots = 8;     // entity slot i moves along row i + 1
  static constexpr int kWords = 6 + kSlots;
  static constexpr int64_t kMaxSteps = 1000;
  // the package's minimal_action_set(), as gymnax has it by default
  static constexpr std::array<int, 5> kMinimalActions{kNoop, kLeft, kUp, kRight, kDown};

  // Words: player x (0..9) and y (1..8); the spawn timer (0..10), the move timer (0..5), the
  // ramp timer (-1..100) and the ramp index (0..9); then the 8 entity slots, each 0 when empty,
  // else 1 + x + 10 * right + 20 * gold (x in 0..9; right: it moves rightwards).
  //
  // Capacity: the package's entity list is exactly 8 slots ([None] * 8), slot i always on row
  // i + 1; a spawn fills a free slot or, with none free, does nothing, so 8 words hold it all.
  //
  // The package's spawn speed and move speed are not words: they are the ramp index's
  // (a ramp lowers the spawn speed from 10 by one each time and the move speed from 5 by one
  // at each odd index, stopping at index 9 where both are 1): spawn speed = 10 - index,
  // move speed = 5 - index / 2 (as the package's reset sets 10, 5 with index 0).
  enum Word { kPlayerX, kPlayerY, kSpawnTimer, kMoveTimer, kRampTimer, kRampIndex, kSlot0 };

  static void reset(double* w, Stream&, const Settings&) {
    w[kPlayerX] = 5;
    w[kPlayerY] = 5;
    for (int i = 0; i < kSlots; ++i) w[kSlot0 + i] = 0;
    w[kSpawnTimer] = kInitSpawnSpeed;
    w[kMoveTimer] = kInitMoveSpeed;
    w[kRampTimer] = kRampInterval;
    w[kRampIndex] = 0;
  }

  static double act(double* w, int action, Stream& random, const Settings& settings,
                    bool& terminal) {
    double reward = 0;
    const int ramp_index = static_cast<int>(w[kRampIndex]);
    const int spawn_speed = kInitSpawnSpeed - ramp_index;
    const int move_speed = kInitMoveSpeed - ramp_index / 2;
    int spawn_timer = static_cast<int>(w[kSpawnTimer]);
    int move_timer = static_cast<int>(w[kMoveTimer]);

    // Spawn an enemy or gold if the timer is up.
    if (spawn_timer == 0) {
      spawn(w, random);
      spawn_timer = spawn_speed;
    }

    // The player's move.
    int px = static_cast<int>(w[kPlayerX]), py = static_cast<int>(w[kPlayerY]);
    if (action == kLeft) px = std::max(0, px - 1);
    else if (action == kRight) px = std::min(9, px + 1);
    else if (action == kUp) py = std::max(1, py - 1);
    else if (action == kDown) py = std::min(8, py + 1);
    w[kPlayerX] = px;
    w[kPlayerY] = py;

    // Entities on the player: gold is picked up, an enemy ends the episode.
    for (int i = 0; i < kSlots; ++i) {
      const int e = static_cast<int>(w[kSlot0 + i]);
      if (e != 0 && x_of(e) == px && i + 1 == py) touch(w, i, reward, terminal);
    }
    if (move_timer == 0) {
      move_timer = move_speed;
      for (int i = 0; i < kSlots; ++i) {
        const int e = static_cast<int>(w[kSlot0 + i]);
        if (e == 0) continue;
        const int x = x_of(e) + (right_of(e) ? 1 : -1);
        if (x < 0 || x > 9) {
          w[kSlot0 + i] = 0;  // off the board (and so not on the player)
          continue;
        }
        w[kSlot0 + i] = e + (right_of(e) ? 1 : -1);
        if (x == px && i + 1 == py) touch(w, i, reward, terminal);
      }
    }

    // The timers.
    w[kSpawnTimer] = spawn_timer - 1;
    w[kMoveTimer] = move_timer - 1;

    // Ramp the difficulty once the interval has elapsed (the package's condition "spawn speed
    // > 1 or move speed > 1" is "index < 9").
    if (settings.ramping && ramp_index < kLastRamp) {
      if (w[kRampTimer] >= 0) {
        w[kRampTimer] -= 1;
      } else {
        w[kRampIndex] = ramp_index + 1;
        w[kRampTimer] = kRampInterval;
      }
    }
    return reward;
  }

  template <class T>
  static void observe(const double* w, const Planes<T>& planes) {
    planes.set(static_cast<int>(w[kPlayerY]), static_cast<int>(w[kPlayerX]), 0);
    for (int i = 0; i < kSlots; ++i) {
      const int e = static_cast<int>(w[kSlot0 + i]);
      if (e == 0) continue;
      const int x = x_of(e);
      planes.set(i + 1, x, gold_of(e) ? 3 : 1);
      const int back = right_of(e) ? x - 1 : x + 1;
      if (back >= 0 && back <= 9) planes.set(i + 1, back, 2);
    }
  }

  static bool valid(const double* w) {
    if (!(whole(w[kPlayerX], 0, 9) && whole(w[kPlayerY], 1, 8) &&
          whole(w[kSpawnTimer], 0, kInitSpawnSpeed) && whole(w[kMoveTimer], 0, kInitMoveSpeed) &&
          whole(w[kRampTimer], -1, kRampInterval) && whole(w[kRampIndex], 0, kLastRamp)))
      return false;
    for (int i = 0; i < kSlots; ++i)
      if (!whole(w[kSlot0 + i], 0, 40)) return false;
    return true;
  }

 private:
  static constexpr int kRampInterval = 100, kInitSpawnSpeed = 10, kInitMoveSpeed = 5;
  static constexpr int kLastRamp = 9;  // the index at which both speeds are 1

  static int x_of(int e) { return (e - 1) % 10; }
  static bool right_of(int e) { return (e - 1) / 10 % 2 == 1; }
  static bool gold_of(int e) { return (e - 1) / 20 == 1; }

  // The entity of slot i on the player.
  static void touch(double* w, int i, double& reward, bool& terminal) {
    if (gold_of(static_cast<int>(w[kSlot0 + i]))) {
      w[kSlot0 + i] = 0;
      reward += 1;
    } else {
      terminal = true;
    }
  }

  // A new enemy or gold at a random edge in a random free row (with none free, nothing; the
  // side and kind are drawn first all the same).
  static void spawn(double* w, Stream& random) {
    const bool right = random.rand() < 1.0 / 2;  // from the left edge, moving right
    const bool gold = random.rand() < 1.0 / 3;
    int free[kSlots], count = 0;
    for (int i = 0; i < kSlots; ++i)
      if (w[kSlot0 + i] == 0) free[count++] = i;
    if (count == 0) return;
    const int slot = free[random.randint(count)];
    const int x = right ? 0 : 9;
    w[kSlot0 + slot] = 1 + x + 10 * (right ? 1 : 0) + 20 * (gold ? 1 : 0);
  }
};

}  // namespace metagraph::minatar
