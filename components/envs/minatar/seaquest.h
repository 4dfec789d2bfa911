// MinAtar's Seaquest: the player's submarine (two cells, front and back, so its heading shows)
// moves about rows 0..8 and fires bullets ahead; enemy fish and submarines cross rows 1..8
// (subs fire bullets), +1 for each enemy a bullet strikes. Divers cross too: moving onto one
// picks it up (at most 6 aboard). Oxygen runs down below the surface; surfacing with a diver
// aboard refills it, sets one diver ashore (all six, with a reward of oxygen / 20, when the
// gauge is full) and ramps up the difficulty (enemies spawn sooner and move faster). The
// episode ends when an enemy or enemy bullet touches the player, when oxygen runs out, or on
// surfacing with no diver aboard. The rules, order of updates and quirks are the `minatar`
// package's (environments/seaquest.py), including:
//   - surfacing with six divers empties the gauge and then sets one more ashore: the count is
//     -1, so the next surfacings neither end the episode nor need a diver, each lowering the
//     count by one more (pick-ups raise it again; at 0 surfacing ends the episode again);
//   - a sub whose shot timer is up fires on the step it leaves the board or is struck in its
//     own move (a bullet off the board is dropped at once, one on the board flies on);
//   - the entities live in lists updated back to front, and removed with `list.remove`: the
//     first entity equal to the one removed (every field) goes, so removing an earlier equal
//     one leaves the current one in place, updated twice in the step (kept here: ordered
//     lists and that exact removal);
//   - contact with the player is checked both before and after an enemy's or bullet's move;
//     oxygen ends the episode on the step after it reaches 0 (checked before it is spent);
//   - an enemy spawn draws its side, kind and row even when it is cancelled (a row holding an
//     enemy heading the other way);
//   - enemies move every move_speed + 1 steps, divers every 6, subs fire every 11.
#pragma once
#include <array>
#include <algorithm>
#include <cstdint>

#include "minatar.h"

namespace metagraph::minatar {

class Seaquest {
 public:
  static constexpr const char* kName = "Seaquest";
  // sub front, sub back, friendly bullet, trail, enemy bullet, enemy fish, enemy sub, oxygen
  // gauge, diver gauge, diver
  static constexpr int kChannels = 10;
  static constexpr int64_t kMaxSteps = 1000;
  // the package's minimal_action_set(), as gymnax has it by default
  static constexpr std::array<int, 6> kMinimalActions{kNoop, kLeft, kUp, kRight, kDown, kFire};

  // The lists' capacities: no list of a game played from a reset ever holds more, even
  // in the middle of a step (they count what is in a list at any moment of step T).
  //  - Friendly bullets, 2: one shot at most every 5 steps (the cool-down), and a bullet,
  //    moved one cell on the step it is fired and each step after, leaves the board by its
  //    10th move: those in the list during step T were fired in steps T-9..T.
  //  - Divers, 2: one spawns every 30 steps exactly; it moves on its 6th step and every 6th
  //    after, so its 10th move (off the board) comes 59 steps after its spawn: those in the
  //    list during step T spawned in steps T-59..T.
  //  - Enemies (fish and subs together), 32: one spawn a step at most. An enemy spawned with
  //    move interval m (its timer starts at m; the interval only falls later) moves on the
  //    m-th step after its spawn and then every m+1 steps at most, so it leaves the board by
  //    step s + 10m + 9. Those spawned with m = 2 (the least) and still there in step T spawned
  //    in T-29..T: at most 30 steps. Those spawned with m >= 3 (ramp index <= 5, spawn
  //    interval >= 15) are at least 15 steps apart and still there only if spawned after
  //    T-60; in T-59..T-30 there are at most 2 of them, and any in T-29..T take one of the
  //    30 steps: 32 in all.
  //  - Enemy bullets, 32: one flies at most 10 steps as a friendly bullet does, so those in
  //    the list during step T (a sub's bullet fired off the board, dropped in the same step,
  //    counted too) were fired in steps T-9..T. A sub fires 10 steps after its spawn and
  //    then every 11 steps, so each bullet is from a different sub, spawned by step T-10 and
  //    still there after it: an enemy present during step T-10, 32 at most.
  // States set from outside may break these counts (a full list whose entities stay on the
  // board); a step then skips the spawn or shot a full list has no room for, so that every
  // step leaves a valid state.
  static constexpr int kShotCap = 2, kEnemyShotCap = 32, kEnemyCap = 32, kDiverCap = 2;

  // Words: oxygen (-1..200; -1 stands for any negative: the episode has then ended), the
  // diver count (kMinDivers..6), the player's x (0..9), y (0..8) and heading (1 right; never
  // facing off the board), the shot cool-down (0..5), the enemy and diver spawn timers (0..20,
  // 0..30), the ramp index (0..19: the spawn interval is 20 - index and the move interval
  // 5 - min(3, index / 2), as the package's ramp makes them), whether the player is at the
  // surface, the lists' sizes (fish and subs share the enemy slots: fish first, then subs),
  // then each list's slots, an entity a word: x + 10 * (y + 10 * (heading + 2 * (timer + 6 *
  // shot timer))), unused slots 0.
  enum Word {
    kOxygen, kDiverCount, kSubX, kSubY, kSubRight, kShotTimer, kEnemyTimer, kDiverTimer,
    kRamp, kSurface, kNumShots, kNumEnemyShots, kNumFish, kNumSubs, kNumDivers,
    kShots, kEnemyShots = kShots + kShotCap, kEnemies = kEnemyShots + kEnemyShotCap,
    kDivers = kEnemies + kEnemyCap, kEnd = kDivers + kDiverCap
  };
  static constexpr int kWords = kEnd;

  // Below 0 the diver count only matters through pick-ups bringing it back to 0 or 6; an
  // episode (at most 2^40 steps) surfaces at most 2^39 + 1 times, so this floor, which the
  // count keeps to, is never reached from a reset.
  static constexpr int64_t kMinDivers = -(int64_t{1} << 41);

  static void reset(double* w, Stream&, const Settings&) {
    std::fill(w, w + kWords, 0.0);
    w[kOxygen] = kMaxOxygen;
    w[kSubX] = 5;
    w[kEnemyTimer] = spawn_interval(0);
    w[kDiverTimer] = kDiverSpawnInterval;
    w[kSurface] = 1;
  }

  static double act(double* w, int action, Stream& random, const Settings& settings,
                    bool& terminal) {
    State g;
    g.load(w);
    int64_t r = 0;
    const int ramp = g.ramp, move_speed = move_interval(ramp);

    if (g.enemy_timer == 0) {
      spawn_enemy(g, random, move_speed);
      g.enemy_timer = spawn_interval(ramp);
    }
    if (g.diver_timer == 0) {
      spawn_diver(g, random);
      g.diver_timer = kDiverSpawnInterval;
    }

    if (action == kFire && g.shot_timer == 0) {
      g.shots.push({g.sub_x, g.sub_y, g.sub_right, 0, 0});
      g.shot_timer = kShotCoolDown;
    } else if (action == kLeft) {
      g.sub_x = std::max(0, g.sub_x - 1);
      g.sub_right = 0;
    } else if (action == kRight) {
      g.sub_x = std::min(9, g.sub_x + 1);
      g.sub_right = 1;
    } else if (action == kUp) {
      g.sub_y = std::max(0, g.sub_y - 1);
    } else if (action == kDown) {
      g.sub_y = std::min(8, g.sub_y + 1);
    }
    const int px = g.sub_x, py = g.sub_y;

    // Friendly bullets (each loop runs back to front as `reversed` does: it stops at an
    // index past the end, and an entity removed before the current one moves it down one).
    for (int i = g.shots.n - 1; i >= 0 && i < g.shots.n; --i) {
      Entity& bullet = g.shots.item[i];
      bullet.x += bullet.right ? 1 : -1;
      if (off_board(bullet)) {
        g.shots.remove(Entity(bullet));
        continue;
      }
      int k = g.fish.at(bullet.x, bullet.y);
      if (k >= 0) {
        g.fish.remove(Entity(g.fish.item[k]));
        g.shots.remove(Entity(bullet));
        r += 1;
        continue;
      }
      k = g.subs.at(bullet.x, bullet.y);
      if (k >= 0) {
        g.subs.remove(Entity(g.subs.item[k]));
        g.shots.remove(Entity(bullet));
        r += 1;
      }
    }

    // Divers.
    for (int i = g.divers.n - 1; i >= 0 && i < g.divers.n; --i) {
      Entity& diver = g.divers.item[i];
      if (diver.x == px && diver.y == py && g.diver_count < 6) {
        g.divers.remove(Entity(diver));
        g.diver_count += 1;
      } else if (diver.timer == 0) {
        diver.timer = kDiverMoveInterval;
        diver.x += diver.right ? 1 : -1;
        if (off_board(diver)) {
          g.divers.remove(Entity(diver));
        } else if (diver.x == px && diver.y == py && g.diver_count < 6) {
          g.divers.remove(Entity(diver));
          g.diver_count += 1;
        }
      } else {
        diver.timer -= 1;
      }
    }

    // Enemy subs: a sub goes on (its shot) after its removal, so `sub` follows the entity
    // itself: out of the list when it was the one removed, one slot down when an earlier
    // equal one was.
    for (int i = g.subs.n - 1; i >= 0 && i < g.subs.n; --i) {
      Entity removed{};
      Entity* sub = &g.subs.item[i];
      auto remove_sub = [&] {
        const int j = g.subs.find(*sub);
        if (j < 0) return;
        if (j == i) {
          removed = *sub;
          sub = &removed;
        }
        g.subs.erase(j);
        if (j < i) sub = &g.subs.item[i - 1];
      };
      if (sub->x == px && sub->y == py) terminal = true;
      if (sub->timer == 0) {
        sub->timer = move_speed;
        sub->x += sub->right ? 1 : -1;
        if (off_board(*sub)) {
          remove_sub();
        } else if (sub->x == px && sub->y == py) {
          terminal = true;
        } else {
          const int k = g.shots.at(sub->x, sub->y);
          if (k >= 0) {
            remove_sub();
            g.shots.remove(Entity(g.shots.item[k]));
            r += 1;
          }
        }
      } else {
        sub->timer -= 1;
      }
      if (sub->shot == 0) {
        sub->shot = kEnemyShotInterval;
        g.enemy_shots.push({sub->x, sub->y, sub->right, 0, 0});
      } else {
        sub->shot -= 1;
      }
    }

    // Enemy bullets.
    for (int i = g.enemy_shots.n - 1; i >= 0 && i < g.enemy_shots.n; --i) {
      Entity& bullet = g.enemy_shots.item[i];
      if (bullet.x == px && bullet.y == py) terminal = true;
      bullet.x += bullet.right ? 1 : -1;
      if (off_board(bullet)) g.enemy_shots.remove(Entity(bullet));
      else if (bullet.x == px && bullet.y == py) terminal = true;
    }

    // Enemy fish.
    for (int i = g.fish.n - 1; i >= 0 && i < g.fish.n; --i) {
      Entity& fish = g.fish.item[i];
      if (fish.x == px && fish.y == py) terminal = true;
      if (fish.timer == 0) {
        fish.timer = move_speed;
        fish.x += fish.right ? 1 : -1;
        if (off_board(fish)) {
          g.fish.remove(Entity(fish));
        } else if (fish.x == px && fish.y == py) {
          terminal = true;
        } else {
          const int k = g.shots.at(fish.x, fish.y);
          if (k >= 0) {
            g.fish.remove(Entity(fish));
            g.shots.remove(Entity(g.shots.item[k]));
            r += 1;
          }
        }
      } else {
        fish.timer -= 1;
      }
    }

    // Timers, oxygen and the surface.
    g.enemy_timer -= g.enemy_timer > 0;
    g.diver_timer -= g.diver_timer > 0;
    g.shot_timer -= g.shot_timer > 0;
    if (g.oxygen <= 0) terminal = true;
    if (g.sub_y > 0) {
      g.oxygen = std::max<int64_t>(g.oxygen - 1, -1);
      g.surface = 0;
    } else if (!g.surface) {
      if (g.diver_count == 0) terminal = true;
      else r += surface(g, settings);
    }
    g.store(w);
    return static_cast<double>(r);
  }

  template <class T>
  static void observe(const double* w, const Planes<T>& planes) {
    const int sub_x = static_cast<int>(w[kSubX]), sub_y = static_cast<int>(w[kSubY]);
    const bool right = w[kSubRight] != 0;
    planes.set(sub_y, sub_x, 0);
    planes.set(sub_y, right ? sub_x - 1 : sub_x + 1, 1);
    const int64_t oxygen = std::max<int64_t>(0, static_cast<int64_t>(w[kOxygen]));
    for (int x = 0; x < oxygen * 10 / kMaxOxygen; ++x) planes.set(9, x, 7);
    const int64_t divers = static_cast<int64_t>(w[kDiverCount]);
    for (int64_t x = 9 - divers; x < 9; ++x) planes.set(9, static_cast<int>(x), 8);
    const int shots = static_cast<int>(w[kNumShots]);
    for (int k = 0; k < shots; ++k) mark(w[kShots + k], planes, 2, -1);
    const int enemy_shots = static_cast<int>(w[kNumEnemyShots]);
    for (int k = 0; k < enemy_shots; ++k) mark(w[kEnemyShots + k], planes, 4, -1);
    const int fish = static_cast<int>(w[kNumFish]), subs = static_cast<int>(w[kNumSubs]);
    for (int k = 0; k < fish; ++k) mark(w[kEnemies + k], planes, 5, 3);
    for (int k = fish; k < fish + subs; ++k) mark(w[kEnemies + k], planes, 6, 3);
    const int divers_n = static_cast<int>(w[kNumDivers]);
    for (int k = 0; k < divers_n; ++k) mark(w[kDivers + k], planes, 9, 3);
  }

  static bool valid(const double* w) {
    if (!(whole(w[kOxygen], -1, kMaxOxygen) &&
          whole(w[kDiverCount], static_cast<double>(kMinDivers), 6) &&
          whole(w[kSubX], 0, 9) && whole(w[kSubY], 0, 8) && whole(w[kSubRight], 0, 1) &&
          whole(w[kShotTimer], 0, kShotCoolDown) && whole(w[kEnemyTimer], 0, spawn_interval(0)) &&
          whole(w[kDiverTimer], 0, kDiverSpawnInterval) && whole(w[kRamp], 0, kLastRamp) &&
          whole(w[kSurface], 0, 1) && whole(w[kNumShots], 0, kShotCap) &&
          whole(w[kNumEnemyShots], 0, kEnemyShotCap) && whole(w[kNumFish], 0, kEnemyCap) &&
          whole(w[kNumSubs], 0, kEnemyCap) && w[kNumFish] + w[kNumSubs] <= kEnemyCap &&
          whole(w[kNumDivers], 0, kDiverCap)))
      return false;
    // the back of the player's sub is on the board (a step keeps it there)
    if (w[kSubRight] != 0 ? w[kSubX] == 0 : w[kSubX] == 9) return false;
    const int fish = static_cast<int>(w[kNumFish]);
    return slots(w + kShots, kShotCap, static_cast<int>(w[kNumShots]), 0, 0, 0) &&
           slots(w + kEnemyShots, kEnemyShotCap, static_cast<int>(w[kNumEnemyShots]), 1, 0, 0) &&
           slots(w + kEnemies, fish, fish, 1, kMaxTimer, 0) &&
           slots(w + kEnemies + fish, kEnemyCap - fish, static_cast<int>(w[kNumSubs]), 1,
                 kMaxTimer, kEnemyShotInterval) &&
           slots(w + kDivers, kDiverCap, static_cast<int>(w[kNumDivers]), 1, kMaxTimer, 0);
  }

 private:
  static constexpr int kMaxOxygen = 200;
  static constexpr int kDiverSpawnInterval = 30;
  static constexpr int kShotCoolDown = 5;
  static constexpr int kEnemyShotInterval = 10;
  static constexpr int kDiverMoveInterval = 5;
  static constexpr int kMaxTimer = 5;  // an enemy's or diver's move timer: 0..5
  static constexpr int kLastRamp = 19;  // spawn interval 1 and move interval 2: no more ramp

  // The package's spawn interval (e_spawn_speed) and move interval (move_speed) at a ramp
  // index: from 20 and 5, the first falls by one at each ramp down to 1 (index 19), the
  // second at the ramps from odd indices 1, 3, 5 down to 2.
  static constexpr int spawn_interval(int ramp) { return 20 - ramp; }
  static constexpr int move_interval(int ramp) { return 5 - std::min(3, ramp / 2); }

  // An entity of a list: a bullet (timer and shot 0), a fish (shot 0), a sub or a diver.
  struct Entity {
    int x, y, right, timer, shot;
    bool operator==(const Entity& o) const {
      return x == o.x && y == o.y && right == o.right && timer == o.timer && shot == o.shot;
    }
    double code() const { return x + 10 * (y + 10 * (right + 2 * (timer + 6 * shot))); }
    static Entity of(double word) {
      int64_t c = static_cast<int64_t>(word);
      Entity e;
      e.x = static_cast<int>(c % 10), c /= 10;
      e.y = static_cast<int>(c % 10), c /= 10;
      e.right = static_cast<int>(c % 2), c /= 2;
      e.timer = static_cast<int>(c % 6), c /= 6;
      e.shot = static_cast<int>(c);
      return e;
    }
  };
  static bool off_board(const Entity& e) { return e.x < 0 || e.x > 9; }

  // A Python list of entities with room for N.
  template <int N>
  struct List {
    Entity item[N];
    int n = 0;
    void push(const Entity& e) {
      if (n < N) item[n++] = e;  // a full list only in states set from outside
    }
    int find(const Entity& e) const {
      for (int k = 0; k < n; ++k)
        if (item[k] == e) return k;
      return -1;
    }
    void erase(int k) {
      for (; k + 1 < n; ++k) item[k] = item[k + 1];
      --n;
    }
    // list.remove: the first entity equal to e.
    void remove(const Entity& e) {
      const int k = find(e);
      if (k >= 0) erase(k);
    }
    // The first entity in cell (x, y), or -1.
    int at(int x, int y) const {
      for (int k = 0; k < n; ++k)
        if (item[k].x == x && item[k].y == y) return k;
      return -1;
    }
    void load(const double* w, int count) {
      n = count;
      for (int k = 0; k < n; ++k) item[k] = Entity::of(w[k]);
    }
    // Stores the list in `room` slots from w (unused ones 0); returns the slots used.
    int store(double* w, int room) const {
      int used = 0;
      for (int k = 0; k < n && used < room; ++k)
        if (!off_board(item[k])) w[used++] = item[k].code();  // always on the board
      std::fill(w + used, w + room, 0.0);
      return used;
    }
  };

  // The game's state being stepped.
  struct State {
    int64_t oxygen, diver_count;
    int sub_x, sub_y, sub_right, shot_timer, enemy_timer, diver_timer, ramp, surface;
    List<kShotCap> shots;
    List<kEnemyShotCap> enemy_shots;
    List<kEnemyCap> fish, subs;
    List<kDiverCap> divers;

    void load(const double* w) {
      oxygen = static_cast<int64_t>(w[kOxygen]);
      diver_count = static_cast<int64_t>(w[kDiverCount]);
      sub_x = static_cast<int>(w[kSubX]);
      sub_y = static_cast<int>(w[kSubY]);
      sub_right = static_cast<int>(w[kSubRight]);
      shot_timer = static_cast<int>(w[kShotTimer]);
      enemy_timer = static_cast<int>(w[kEnemyTimer]);
      diver_timer = static_cast<int>(w[kDiverTimer]);
      ramp = static_cast<int>(w[kRamp]);
      surface = static_cast<int>(w[kSurface]);
      shots.load(w + kShots, static_cast<int>(w[kNumShots]));
      enemy_shots.load(w + kEnemyShots, static_cast<int>(w[kNumEnemyShots]));
      const int fish_n = static_cast<int>(w[kNumFish]);
      fish.load(w + kEnemies, fish_n);
      subs.load(w + kEnemies + fish_n, static_cast<int>(w[kNumSubs]));
      divers.load(w + kDivers, static_cast<int>(w[kNumDivers]));
    }
    void store(double* w) const {
      w[kOxygen] = static_cast<double>(oxygen);
      w[kDiverCount] = static_cast<double>(diver_count);
      w[kSubX] = sub_x;
      w[kSubY] = sub_y;
      w[kSubRight] = sub_right;
      w[kShotTimer] = shot_timer;
      w[kEnemyTimer] = enemy_timer;
      w[kDiverTimer] = diver_timer;
      w[kRamp] = ramp;
      w[kSurface] = surface;
      w[kNumShots] = shots.store(w + kShots, kShotCap);
      w[kNumEnemyShots] = enemy_shots.store(w + kEnemyShots, kEnemyShotCap);
      const int fish_n = fish.store(w + kEnemies, kEnemyCap);
      w[kNumFish] = fish_n;
      w[kNumSubs] = subs.store(w + kEnemies + fish_n, kEnemyCap - fish_n);
      w[kNumDivers] = divers.store(w + kDivers, kDiverCap);
    }
  };

  // _spawn_enemy: side, kind and row drawn always; no spawn in a row holding an enemy that
  // heads the other way.
  static void spawn_enemy(State& g, Stream& random, int move_speed) {
    const int right = random.rand() < 1.0 / 2 ? 1 : 0;
    const bool is_sub = random.rand() < 1.0 / 3;
    const int x = right ? 0 : 9;
    const int y = random.randint(1, 9);
    for (int k = 0; k < g.subs.n; ++k)
      if (g.subs.item[k].y == y && g.subs.item[k].right != right) return;
    for (int k = 0; k < g.fish.n; ++k)
      if (g.fish.item[k].y == y && g.fish.item[k].right != right) return;
    if (g.fish.n + g.subs.n >= kEnemyCap) return;  // only in states set from outside
    if (is_sub) g.subs.push({x, y, right, move_speed, kEnemyShotInterval});
    else g.fish.push({x, y, right, move_speed, 0});
  }

  static void spawn_diver(State& g, Stream& random) {
    const int right = random.rand() < 1.0 / 2 ? 1 : 0;
    const int x = right ? 0 : 9;
    const int y = random.randint(1, 9);
    g.divers.push({x, y, right, kDiverMoveInterval, 0});
  }

  // _surface: refill the oxygen, set divers ashore (all six with a reward), ramp up.
  static int64_t surface(State& g, const Settings& settings) {
    g.surface = 1;
    int64_t r = 0;
    if (g.diver_count == 6) {
      g.diver_count = 0;
      const int64_t v = g.oxygen * 10;  // Python's floor division (oxygen may be -1)
      r = v >= 0 ? v / kMaxOxygen : -((-v + kMaxOxygen - 1) / kMaxOxygen);
    }
    g.oxygen = kMaxOxygen;
    g.diver_count = std::max(g.diver_count - 1, kMinDivers);
    if (settings.ramping && g.ramp < kLastRamp) g.ramp += 1;
    return r;
  }

  // Sets an entity's cell on channel c and, where c_trail >= 0, the cell behind it (when on
  // the board) on the trail channel.
  template <class T>
  static void mark(double word, const Planes<T>& planes, int c, int c_trail) {
    const Entity e = Entity::of(word);
    planes.set(e.y, e.x, c);
    if (c_trail < 0) return;
    const int back = e.right ? e.x - 1 : e.x + 1;
    if (back >= 0 && back <= 9) planes.set(e.y, back, c_trail);
  }

  // `room` slots of which the first n hold entities with y in y_lo..8, timer 0..max_timer and
  // shot timer 0..max_shot; the rest 0.
  static bool slots(const double* w, int room, int n, int y_lo, int max_timer, int max_shot) {
    for (int k = 0; k < room; ++k) {
      if (k >= n) {
        if (w[k] != 0) return false;
        continue;
      }
      if (!whole(w[k], 0, 10 * 10 * 2 * 6 * (kEnemyShotInterval + 1) - 1)) return false;
      const Entity e = Entity::of(w[k]);
      if (e.y < y_lo || e.y > 8 || e.timer > max_timer || e.shot > max_shot) return false;
    }
    return true;
  }
};

}  // namespace metagraph::minatar
