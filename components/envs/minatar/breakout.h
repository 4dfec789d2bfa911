// MinAtar's Breakout: the paddle on the bottom row bounces a ball, which travels along the
// diagonals, into three rows of bricks; +1 per brick, three new rows once all are gone; the
// episode ends when the ball reaches the bottom row beside the paddle. The rules, order of
// updates and quirks are the `minatar` package's (environments/breakout.py): a ball that
// strikes a brick on the step after a strike passes into it without breaking it.
#pragma once
#include <array>
#include <cstdint>

#include "minatar.h"

namespace metagraph::minatar {

class Breakout {
 public:
  static constexpr const char* kName = "Breakout";
  static constexpr int kChannels = 4;  // paddle, ball, trail, brick
  static constexpr int kWords = 8;
  static constexpr int64_t kMaxSteps = 1000;
  // the package's minimal_action_set(), as gymnax has it by default
  static constexpr std::array<int, 3> kMinimalActions{kNoop, kLeft, kRight};

  // Words: ball x, ball y, ball direction (0 up-left, 1 up-right, 2 down-right, 3
  // down-left), paddle x, the ball's previous x and y, whether the last step struck a brick,
  // and the bricks (bit 10 * (y - 1) + x for rows y = 1..3).
  enum Word { kBallX, kBallY, kDir, kPaddle, kLastX, kLastY, kStrike, kBricks };

  static void reset(double* w, Stream& random, const Settings&) {
    w[kBallY] = 3;
    const bool right = random.randint(2) == 1;
    w[kBallX] = right ? 9 : 0;
    w[kDir] = right ? 3 : 2;
    w[kPaddle] = 4;
    w[kBricks] = kAllBricks;
    w[kStrike] = 0;
    w[kLastX] = w[kBallX];
    w[kLastY] = w[kBallY];
  }

  static double act(double* w, int action, Stream&, const Settings&, bool& terminal) {
    double reward = 0;
    int paddle = static_cast<int>(w[kPaddle]);
    if (action == kLeft) paddle = paddle > 0 ? paddle - 1 : 0;
    else if (action == kRight) paddle = paddle < 9 ? paddle + 1 : 9;
    w[kPaddle] = paddle;

    const int ball_x = static_cast<int>(w[kBallX]), ball_y = static_cast<int>(w[kBallY]);
    // The ball on the paddle's row is a game already lost (a step that reaches that row
    // bounces back or ends the game): a state set there ends at once, the ball kept on the
    // board (stepped on, it left the board with empty planes and no end).
    if (ball_y >= 9) {
      terminal = true;
      return reward;
    }
    int dir = static_cast<int>(w[kDir]);
    w[kLastX] = ball_x;
    w[kLastY] = ball_y;
    int new_x = ball_x + (dir == 1 || dir == 2 ? 1 : -1);
    int new_y = ball_y + (dir >= 2 ? 1 : -1);
    uint64_t bricks = static_cast<uint64_t>(w[kBricks]);

    static constexpr int kFlipX[4] = {1, 0, 3, 2}, kFlipY[4] = {3, 2, 1, 0},
                         kFlipBoth[4] = {2, 3, 0, 1};
    bool strike_toggle = false;
    if (new_x < 0 || new_x > 9) {
      new_x = new_x < 0 ? 0 : 9;
      dir = kFlipX[dir];
    }
    if (new_y < 0) {
      new_y = 0;
      dir = kFlipY[dir];
    } else if (brick(bricks, new_y, new_x)) {
      strike_toggle = true;
      if (w[kStrike] == 0) {
        reward += 1;
        w[kStrike] = 1;
        bricks &= ~bit(new_y, new_x);
        new_y = ball_y;
        dir = kFlipY[dir];
      }
    } else if (new_y == 9) {
      if (bricks == 0) bricks = kAllBricks;
      if (ball_x == paddle) {
        dir = kFlipY[dir];
        new_y = ball_y;
      } else if (new_x == paddle) {
        dir = kFlipBoth[dir];
        new_y = ball_y;
      } else {
        terminal = true;
      }
    }
    if (!strike_toggle) w[kStrike] = 0;
    w[kBallX] = new_x;
    w[kBallY] = new_y;
    w[kDir] = dir;
    w[kBricks] = static_cast<double>(bricks);
    return reward;
  }

  template <class T>
  static void observe(const double* w, const Planes<T>& planes) {
    planes.set(static_cast<int>(w[kBallY]), static_cast<int>(w[kBallX]), 1);
    planes.set(9, static_cast<int>(w[kPaddle]), 0);
    planes.set(static_cast<int>(w[kLastY]), static_cast<int>(w[kLastX]), 2);
    const uint64_t bricks = static_cast<uint64_t>(w[kBricks]);
    for (int y = 1; y <= 3; ++y)
      for (int x = 0; x < kSide; ++x)
        if (brick(bricks, y, x)) planes.set(y, x, 3);
  }

  static bool valid(const double* w) {
    return whole(w[kBallX], 0, 9) && whole(w[kBallY], 0, 9) && whole(w[kDir], 0, 3) &&
           whole(w[kPaddle], 0, 9) && whole(w[kLastX], 0, 9) && whole(w[kLastY], 0, 9) &&
           whole(w[kStrike], 0, 1) && whole(w[kBricks], 0, kAllBricks);
  }

 private:
  static constexpr uint64_t kAllBricks = (uint64_t{1} << 30) - 1;
  static uint64_t bit(int y, int x) { return uint64_t{1} << (10 * (y - 1) + x); }
  static bool brick(uint64_t bricks, int y, int x) {
    return y >= 1 && y <= 3 && (bricks & bit(y, x)) != 0;
  }
};

}  // namespace metagraph::minatar
