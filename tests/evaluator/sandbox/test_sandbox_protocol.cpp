// Supervisor-worker frames, through the pipe and through the shared payload file: the bytes arrive
// intact, the file grows for a larger payload and the reader follows, a reply written in place is not
// copied, and frames that lie about their payload are refused with a message.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <numeric>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/shared_payload.hpp"
#include "cuset/evaluator/sandbox/worker_process.hpp"
#include "test_util.hpp"

namespace cuset::sandbox {
namespace {

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    ::close(read);
    ::close(write);
  }
};

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed) & 0xFF);
  return v;
}

// Both ends of one channel in this process: the writer's file and the reader's mapping of it.
struct SharedChannel {
  Pipe pipe;
  SharedPayload writer = SharedPayload::create();
  SharedPayload reader = SharedPayload::adopt(::dup(writer.fd()));
};

TEST(SandboxProtocol, PayloadThroughThePipe) {
  Pipe p;
  // Small enough to sit in the pipe's buffer: writer and reader take turns on one thread.
  writeMessage(p.write, Message{{{"op", "run"}, {"n", 3}}, pattern(4000, 1)});
  auto m = readMessage(p.read, std::nullopt);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->header.at("n"), 3);
  EXPECT_TRUE(m->shared.empty());
  EXPECT_EQ(m->payload, pattern(4000, 1));
}

TEST(SandboxProtocol, PayloadThroughTheSharedFileGrowsAndIsFollowed) {
  SharedChannel c;
  writeMessage(c.pipe.write, Message{{{"n", 1}}, pattern(1000, 2)}, &c.writer);
  auto first = readMessage(c.pipe.read, std::nullopt, &c.reader);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->payload.empty()) << "the bytes must not cross the pipe";
  ASSERT_EQ(first->shared.size(), 1000u);
  EXPECT_EQ(std::memcmp(first->shared.data(), pattern(1000, 2).data(), 1000), 0);

  // Larger than the file's first size (2 MiB): the writer grows it, the reader remaps.
  const std::size_t big = (std::size_t{5} << 20) + 7;
  writeMessage(c.pipe.write, Message{{{"n", 2}}, pattern(big, 3)}, &c.writer);
  auto second = readMessage(c.pipe.read, std::nullopt, &c.reader);
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->shared.size(), big);
  std::vector<std::byte> out;
  second->moveBytesTo(out);
  EXPECT_EQ(out, pattern(big, 3));

  // The reader answers in place: its change reaches the writer through the file, not the pipe.
  second->shared[0] = std::byte{0x5A};
  writeMessage(c.pipe.write, Message{{{"status", "ok"}}, {}, second->shared}, &c.reader);
  auto reply = readMessage(c.pipe.read, std::nullopt, &c.writer);
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(reply->shared.size(), big);
  EXPECT_EQ(reply->shared[0], std::byte{0x5A});
  EXPECT_EQ(reply->shared[big - 1], pattern(big, 3)[big - 1]);
}

TEST(SandboxProtocol, EmptyPayloadsNeedNoFile) {
  SharedChannel c;
  writeMessage(c.pipe.write, Message{{{"op", "hello"}}, {}}, &c.writer);
  auto m = readMessage(c.pipe.read, std::nullopt, &c.reader);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->bytes().empty());
}

TEST(SandboxProtocol, FramesThatLieAboutTheirPayloadAreRefused) {
  {
    // A shared frame on a channel without a shared file.
    SharedChannel c;
    writeMessage(c.pipe.write, Message{{{"n", 1}}, pattern(64, 4)}, &c.writer);
    CUSET_EXPECT_THROW_WITH(readMessage(c.pipe.read, std::nullopt), "shared payload on a channel without one");
  }
  {
    // More shared bytes than the file holds.
    SharedChannel c;
    const std::string header = "{}";
    const std::uint64_t headerSize = header.size(), payloadSize = (std::uint64_t{1} << 30) | kSharedPayloadFlag;
    ASSERT_EQ(::write(c.pipe.write, &headerSize, 8), 8);
    ASSERT_EQ(::write(c.pipe.write, header.data(), header.size()), static_cast<ssize_t>(header.size()));
    ASSERT_EQ(::write(c.pipe.write, &payloadSize, 8), 8);
    CUSET_EXPECT_THROW_WITH(readMessage(c.pipe.read, std::nullopt, &c.reader), "claims 1073741824 shared bytes", "holds 0");
  }
  {
    // Shared bytes handed to a writer without a shared file.
    Pipe p;
    std::vector<std::byte> bytes = pattern(8, 5);
    CUSET_EXPECT_THROW_WITH(writeMessage(p.write, Message{{}, {}, std::span<std::byte>(bytes)}), "without one");
  }
}

TEST(SandboxProtocol, AdoptingAClosedDescriptorFails) { CUSET_EXPECT_THROW_WITH(SharedPayload::adopt(987), "descriptor 987 is not open"); }

}  // namespace
// A minimal worker environment keeps what the worker binary needs to start (on the H200 its libraries
// were found only through LD_LIBRARY_PATH, and every helper died in the loader without it) and drops
// the rest (tokens, HOME) that candidate code could otherwise read.
TEST(WorkerEnvironment, MinimalKeepsTheLibraryPathAndDropsTheRest) {
  std::string a = "LD_LIBRARY_PATH=/opt/lib", b = "CUSET_LOG=debug", c = "HF_TOKEN=secret", d = "HOME=/root";
  char* env[] = {a.data(), b.data(), c.data(), d.data(), nullptr};
  EXPECT_EQ(workerEnvironment(env, WorkerEnvironment::minimal), (std::vector<std::string>{a, b}));
  EXPECT_EQ(workerEnvironment(env, WorkerEnvironment::inherit), (std::vector<std::string>{a, b, c, d}));
}

}  // namespace cuset::sandbox
