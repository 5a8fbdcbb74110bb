// Unit tests of the frame region (kind: requirement, boundary): coroutine frames of a heist
// thread are handed out like a stack, frames freed out of order go to the thread's pool and are
// used again before new memory, an ended thread's region goes to the next thread, and a long
// fork-join of coroutines on two workers stops taking new regions (frame_region.hpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <latch>
#include <thread>
#include <utility>
#include <vector>

#include "heist/detail/core/frame_region.hpp"
#include "heist/heist.hpp"

using heist::detail::allocate_frame;
using heist::detail::deallocate_frame;
using heist::detail::frame_regions_made;
using heist::detail::t_frame_end;
using heist::detail::t_frame_top;

namespace {

// Runs f on a worker of a one-thread executor and waits for it.
template <class F>
void on_worker(F&& f) {
  heist::executor ex(1);
  std::latch done(1);
  ex.post([&] {
    f();
    done.count_down();
  });
  done.wait();
}

constexpr std::size_t k_frame = 176;  // a fork-join fib's frame

heist::task<void> fib(int n, long& out) {
  if (n < 2) {
    out = n;
    co_return;
  }
  long a = 0;
  long b = 0;
  heist::task_group g;
  g.run(fib(n - 1, a));
  co_await fib(n - 2, b);
  co_await g.join();
  out = a + b;
}

}  // namespace

TEST(FrameRegion, FramesDyingInOrderReuseTheSameMemory) {
  on_worker([] {
    void* const a = allocate_frame(k_frame);
    void* const b = allocate_frame(k_frame);
    EXPECT_EQ(static_cast<std::byte*>(b), static_cast<std::byte*>(a) + k_frame);
    EXPECT_EQ(t_frame_top, static_cast<std::byte*>(b) + k_frame);
    deallocate_frame(b, k_frame);
    deallocate_frame(a, k_frame);
    EXPECT_EQ(t_frame_top, static_cast<std::byte*>(a));
    void* const again = allocate_frame(k_frame - 8);  // the same 16-byte block size
    EXPECT_EQ(again, a);
    deallocate_frame(again, k_frame - 8);
  });
}

TEST(FrameRegion, AFrameFreedOutOfOrderIsUsedAgainOnceTheRegionIsFull) {
  on_worker([] {
    void* const older = allocate_frame(k_frame);
    void* const newer = allocate_frame(k_frame);
    std::byte* const top = t_frame_top;
    deallocate_frame(older, k_frame);  // a newer frame lives above it: to the pool
    EXPECT_EQ(t_frame_top, top);
    // Fill the region; the next frame is the one freed out of order, not new memory.
    std::vector<void*> filler;
    while (static_cast<std::size_t>(t_frame_end - t_frame_top) >= k_frame) {
      filler.push_back(allocate_frame(k_frame));
    }
    const std::size_t made = frame_regions_made();
    EXPECT_EQ(allocate_frame(k_frame), older);
    EXPECT_EQ(frame_regions_made(), made);
    deallocate_frame(older, k_frame);
    for (auto it = filler.rbegin(); it != filler.rend(); ++it)
      deallocate_frame(*it, k_frame);
    deallocate_frame(newer, k_frame);
    EXPECT_EQ(t_frame_top, top - k_frame);
  });
}

TEST(FrameRegion, AFrameFreedOnAnotherThreadGoesToThatThreadsPool) {
  heist::executor ex(1);
  void* frame = nullptr;
  {
    std::latch done(1);
    ex.post([&] {
      frame = allocate_frame(k_frame);
      done.count_down();
    });
    done.wait();
  }
  // This thread (outside the executor, with a context of its own once it frees) keeps the
  // block; the worker's region is untouched by it.
  std::thread other([&] {
    heist::executor mine(1);
    std::latch done(1);
    mine.post([&] {
      std::byte* const top = t_frame_top;
      deallocate_frame(frame, k_frame);
      EXPECT_EQ(t_frame_top, top);
      done.count_down();
    });
    done.wait();
  });
  other.join();
}

TEST(FrameRegion, AnEndedThreadsRegionGoesToTheNextThread) {
  std::byte* first_top = nullptr;
  std::thread([&] {
    on_worker([&] {
      deallocate_frame(allocate_frame(k_frame), k_frame);
      first_top = t_frame_top;
    });
  }).join();
  ASSERT_NE(first_top, nullptr);
  const std::size_t made = frame_regions_made();
  // The worker ended, giving its region's free part back: a later worker starts there (some
  // region given back, not fresh memory).
  on_worker([&] { deallocate_frame(allocate_frame(k_frame), k_frame); });
  EXPECT_EQ(frame_regions_made(), made);
}

TEST(FrameRegion, FramesOverTheLargestClassComeFromTheGlobalHeap) {
  on_worker([] {
    std::byte* const top = t_frame_top;
    void* const big = allocate_frame(4096);
    EXPECT_EQ(t_frame_top, top);
    deallocate_frame(big, 4096);
  });
}

TEST(FrameRegion, AThreadOutsideHeistUsesNoRegion) {
  std::thread([] {
    void* const p = allocate_frame(k_frame);
    EXPECT_EQ(t_frame_top, nullptr);
    deallocate_frame(p, k_frame);
  }).join();
}

// Steals leave frames freed on other threads and out of order; those blocks are used again, so
// after a warm-up the rounds take no new memory.
TEST(FrameRegion, ALongCoroutineForkJoinOnTwoWorkersStopsTakingRegions) {
  heist::executor ex(2);
  const auto round = [&] {
    long v = 0;
    std::latch done(1);
    ex.post([&] {
      heist::sync_wait(fib(18, v));
      done.count_down();
    });
    done.wait();
    EXPECT_EQ(v, 2584);
  };
  for (int i = 0; i < 50; ++i)
    round();
  const std::size_t warm = frame_regions_made();
  for (int i = 0; i < 500; ++i)
    round();
  // Each region is 64 KiB; 500 rounds make 2.5 million frames.
  EXPECT_LE(frame_regions_made() - warm, 4u) << "regions keep being made: memory grows";
}
