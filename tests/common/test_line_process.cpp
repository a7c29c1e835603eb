#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cuset/common/line_process.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

using namespace std::chrono_literals;

// Two lines in one write, then one line in two writes: every line comes out whole, in order.
TEST(PipeLines, SplitsAndJoinsWhatThePipeDelivers) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  PipeLines lines;
  std::string line;
  const auto soon = [] { return std::chrono::steady_clock::now() + 2s; };
  ASSERT_EQ(::write(fds[1], "one\ntwo\nth", 10), 10);
  EXPECT_EQ(lines.next(fds[0], line, soon()), PipeLines::End::line);
  EXPECT_EQ(line, "one");
  EXPECT_EQ(lines.next(fds[0], line, soon()), PipeLines::End::line);
  EXPECT_EQ(line, "two");
  EXPECT_EQ(lines.next(fds[0], line, std::chrono::steady_clock::now() + 50ms), PipeLines::End::timedOut);
  ASSERT_EQ(::write(fds[1], "ree\n", 4), 4);
  EXPECT_EQ(lines.next(fds[0], line, soon()), PipeLines::End::line);
  EXPECT_EQ(line, "three");
  std::atomic<bool> cancel{true};
  EXPECT_EQ(lines.next(fds[0], line, soon(), &cancel), PipeLines::End::cancelled);
  ::close(fds[1]);
  EXPECT_EQ(lines.next(fds[0], line, soon()), PipeLines::End::closed);
  ::close(fds[0]);
}

TEST(LineProcess, AnswersLineForLineAndSaysHowItEnded) {
  test::TempDir dir;
  LineProcess cat({"/bin/sh", "-c", "while read l; do echo \"got $l\"; done; echo bye >&2; exit 3"}, dir / "stderr");
  ASSERT_TRUE(cat.alive());
  EXPECT_EQ(cat.exchange("a", 5s).line.value_or("<none>"), "got a");
  EXPECT_EQ(cat.exchange("b", 5s).line.value_or("<none>"), "got b");
  // Past its time limit the child is killed, and says so.
  LineProcess silent({"/bin/sh", "-c", "sleep 30"}, dir / "silent");
  const auto slow = silent.exchange("anything", 200ms);
  EXPECT_FALSE(slow.line);
  EXPECT_TRUE(slow.timedOut);
  EXPECT_FALSE(silent.alive());
  EXPECT_EQ(silent.ending(), "killed at its time limit");
  // A cancellation from another thread ends the wait and the child.
  LineProcess waiting({"/bin/sh", "-c", "sleep 30"}, dir / "waiting");
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel = true;
  });
  const auto cancelled = waiting.exchange("", 20s, &cancel);
  canceller.join();
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_EQ(waiting.ending(), "killed: cancelled");
}

TEST(LineProcess, AChildThatEndsGivesNoReplyAndItsStatus) {
  test::TempDir dir;
  LineProcess quits({"/bin/sh", "-c", "read l; echo leaving >&2; exit 3"}, dir / "stderr");
  const auto reply = quits.exchange("x", 5s);
  EXPECT_FALSE(reply.line);
  EXPECT_FALSE(reply.timedOut);
  EXPECT_FALSE(quits.alive());
  EXPECT_EQ(quits.ending(), "exited with status 3");
  EXPECT_NE(quits.stderrTail().find("leaving"), std::string::npos) << quits.stderrTail();
  EXPECT_FALSE(quits.exchange("again", 1s).line) << "a child that ended answers nothing";
}

}  // namespace
}  // namespace cuset
