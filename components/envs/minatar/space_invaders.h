// MinAtar's SpaceInvaders: the cannon on the bottom row moves left and right and fires
// bullets up (one every 5 steps at most) at a 4x6 block of aliens that marches across the
// board, stepping down and turning at each edge, and fires back from the alien nearest the
// cannon every 10 steps; +1 per alien shot; the episode ends when an alien or an alien's
// bullet reaches the cannon (or the block turns with an alien on the bottom row). The fewer
// the aliens, the faster they march (once every min(aliens, interval) steps); a cleared
// wave is replaced at once, and with difficulty ramping each new wave's interval is one less
// (12 down to 6). The rules, order of updates and quirks are the `minatar` package's
// (environments/space_invaders.py): bullets move before aliens, and only an alien on the same
// cell as a friendly bullet after both moved is shot (the two can pass each other); the
// bullet rows and the aliens' step down are np.roll's, so an alien block stepping down from
// the bottom row wraps round to the top row (in the step that ends the episode); a new wave
// keeps the old wave's march timer.
#pragma once
#include <array>
#include <cstdint>

#include "minatar.h"

namespace metagraph::minatar {

class SpaceInvaders {
 public:
  static constexpr const char* kName = "SpaceInvaders";
  // cannon, alien, alien moving left, alien moving right, friendly bullet, enemy bullet
  static constexpr int kChannels = 6;
  static constexpr int kWords = 12;
  static constexpr int64_t kMaxSteps = 1000;
  // the package's minimal_action_set(), as gymnax has it by default
  static constexpr std::array<int, 4> kMinimalActions{kNoop, kLeft, kRight, kFire};

  // Words: the cannon's x (0..9), the aliens' direction (-1 left, 1 right), the march
  // interval (12..6; the package's ramp index is 12 - interval), the march timer (0..12), the
  // aliens' shot timer (0..10), the cannon's shot timer (0..5); then the three 10x10 maps of
  // the package (aliens, friendly bullets, enemy bullets), two words each: cell (y, x) is bit
  // 10 * y + x of the first word for rows 0..4, bit 10 * (y - 5) + x of the second for 5..9.
  //
  // Capacity: the package's entities are these three 10x10 maps (a cell holds one or none),
  // so the 100 bits of each hold every state. The alien map is never empty (a cleared wave is
  // replaced in the same step), which keeps the march timer from running below 0.
  enum Word {
    kPos, kDir, kInterval, kMoveTimer, kAlienShotTimer, kShotTimer,
    kAliens, kFriendly = kAliens + 2, kEnemy = kFriendly + 2
  };

  static void reset(double* w, Stream&, const Settings&) {
    w[kPos] = 5;
    Grid none{}, aliens{};
    fill_wave(aliens);
    store(w + kAliens, aliens);
    store(w + kFriendly, none);
    store(w + kEnemy, none);
    w[kDir] = -1;
    w[kInterval] = kEnemyMoveInterval;
    w[kMoveTimer] = kEnemyMoveInterval;
    w[kAlienShotTimer] = kEnemyShotInterval;
    w[kShotTimer] = 0;
  }

  static double act(double* w, int action, Stream&, const Settings& settings,
                    bool& terminal) {
    Grid aliens = load(w + kAliens), friendly = load(w + kFriendly), enemy = load(w + kEnemy);
    int pos = static_cast<int>(w[kPos]), dir = static_cast<int>(w[kDir]);
    int interval = static_cast<int>(w[kInterval]);
    int move_timer = static_cast<int>(w[kMoveTimer]);
    int alien_shot_timer = static_cast<int>(w[kAlienShotTimer]);
    int shot_timer = static_cast<int>(w[kShotTimer]);

    // The cannon's action.
    if (action == kFire && shot_timer == 0) {
      friendly.row[9] |= cell(pos);
      shot_timer = kShotCoolDown;
    } else if (action == kLeft) {
      pos = std::max(0, pos - 1);
    } else if (action == kRight) {
      pos = std::min(9, pos + 1);
    }

    // Friendly bullets up a row (np.roll -1 with the bottom row cleared), enemy bullets down
    // (np.roll +1 with the top row cleared).
    for (int y = 0; y < 9; ++y) friendly.row[y] = friendly.row[y + 1];
    friendly.row[9] = 0;
    for (int y = 9; y > 0; --y) enemy.row[y] = enemy.row[y - 1];
    enemy.row[0] = 0;
    if (enemy.row[9] & cell(pos)) terminal = true;

    // The aliens.
    if (aliens.row[9] & cell(pos)) terminal = true;
    if (move_timer == 0) {
      move_timer = std::min(count(aliens), interval);
      if ((column(aliens, 0) && dir < 0) || (column(aliens, 9) && dir > 0)) {
        dir = -dir;
        if (aliens.row[9] != 0) terminal = true;
        const uint16_t bottom = aliens.row[9];  // np.roll +1 along rows: the bottom wraps
        for (int y = 9; y > 0; --y) aliens.row[y] = aliens.row[y - 1];
        aliens.row[0] = bottom;
      } else {
        for (int y = 0; y < kSide; ++y) {  // np.roll by dir along columns
          const uint16_t r = aliens.row[y];
          aliens.row[y] = dir > 0 ? static_cast<uint16_t>(((r << 1) | (r >> 9)) & kRow)
                                  : static_cast<uint16_t>((r >> 1) | ((r & 1) << 9));
        }
      }
      if (aliens.row[9] & cell(pos)) terminal = true;
    }
    if (alien_shot_timer == 0) {
      alien_shot_timer = kEnemyShotInterval;
      // The package's _nearest_alien: columns by distance from the cannon, the left one
      // first on a tie; the lowest alien of the first column holding one. The map is never
      // empty here (see Capacity), so it finds one.
      for (int d = 0; d < kSide; ++d) {
        int x = -1;
        if (pos - d >= 0 && column(aliens, pos - d)) x = pos - d;
        else if (d > 0 && pos + d <= 9 && column(aliens, pos + d)) x = pos + d;
        if (x < 0) continue;
        int y = 9;
        while (!(aliens.row[y] & cell(x))) --y;
        enemy.row[y] |= cell(x);
        break;
      }
    }

    // Aliens shot: on the cell of a friendly bullet.
    double reward = 0;
    for (int y = 0; y < kSide; ++y) {
      const uint16_t kill = aliens.row[y] & friendly.row[y];
      for (int x = 0; x < kSide; ++x) reward += (kill >> x) & 1;
      aliens.row[y] &= static_cast<uint16_t>(~kill);
      friendly.row[y] &= static_cast<uint16_t>(~kill);
    }

    // The timers, and a new wave once this one is cleared.
    shot_timer -= shot_timer > 0 ? 1 : 0;
    move_timer -= 1;
    alien_shot_timer -= 1;
    if (count(aliens) == 0) {
      if (interval > kLastInterval && settings.ramping) interval -= 1;
      fill_wave(aliens);
    }

    w[kPos] = pos;
    w[kDir] = dir;
    w[kInterval] = interval;
    w[kMoveTimer] = move_timer;
    w[kAlienShotTimer] = alien_shot_timer;
    w[kShotTimer] = shot_timer;
    store(w + kAliens, aliens);
    store(w + kFriendly, friendly);
    store(w + kEnemy, enemy);
    return reward;
  }

  template <class T>
  static void observe(const double* w, const Planes<T>& planes) {
    planes.set(9, static_cast<int>(w[kPos]), 0);
    const Grid aliens = load(w + kAliens), friendly = load(w + kFriendly),
               enemy = load(w + kEnemy);
    const int direction_channel = w[kDir] < 0 ? 2 : 3;
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x) {
        if (aliens.row[y] & cell(x)) {
          planes.set(y, x, 1);
          planes.set(y, x, direction_channel);
        }
        if (friendly.row[y] & cell(x)) planes.set(y, x, 4);
        if (enemy.row[y] & cell(x)) planes.set(y, x, 5);
      }
  }

  static bool valid(const double* w) {
    if (!(whole(w[kPos], 0, 9) && (w[kDir] == -1 || w[kDir] == 1) &&
          whole(w[kInterval], kLastInterval, kEnemyMoveInterval) &&
          whole(w[kMoveTimer], 0, kEnemyMoveInterval) &&
          whole(w[kAlienShotTimer], 0, kEnemyShotInterval) &&
          whole(w[kShotTimer], 0, kShotCoolDown)))
      return false;
    for (int k = kAliens; k < kEnemy + 2; ++k)
      if (!whole(w[k], 0, kHalf)) return false;
    return w[kAliens] != 0 || w[kAliens + 1] != 0;  // never without aliens
  }

 private:
  static constexpr int kShotCoolDown = 5, kEnemyMoveInterval = 12, kEnemyShotInterval = 10;
  static constexpr int kLastInterval = 6;  // ramping stops here
  static constexpr uint16_t kRow = 0x3FF;  // the 10 cells of a row
  static constexpr double kHalf = static_cast<double>((uint64_t{1} << 50) - 1);  // 5 rows

  // A 10x10 map: bit x of row y is cell (y, x).
  struct Grid {
    uint16_t row[kSide];
  };
  static uint16_t cell(int x) { return static_cast<uint16_t>(1u << x); }
  static Grid load(const double* words) {
    Grid g{};
    for (int half = 0; half < 2; ++half) {
      const uint64_t bits = static_cast<uint64_t>(words[half]);
      for (int y = 0; y < 5; ++y) g.row[5 * half + y] = (bits >> (10 * y)) & kRow;
    }
    return g;
  }
  static void store(double* words, const Grid& g) {
    for (int half = 0; half < 2; ++half) {
      uint64_t bits = 0;
      for (int y = 0; y < 5; ++y) bits |= uint64_t{g.row[5 * half + y]} << (10 * y);
      words[half] = static_cast<double>(bits);
    }
  }
  static int count(const Grid& g) {
    int n = 0;
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x) n += (g.row[y] >> x) & 1;
    return n;
  }
  static bool column(const Grid& g, int x) {
    for (int y = 0; y < kSide; ++y)
      if (g.row[y] & cell(x)) return true;
    return false;
  }
  // The package's new wave: alien_map[0:4, 2:8] = 1.
  static void fill_wave(Grid& g) {
    for (int y = 0; y < 4; ++y) g.row[y] |= 0xFC;
  }
};

}  // namespace metagraph::minatar
