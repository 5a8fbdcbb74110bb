// Sizing: available_parallelism(), HEIST_NUM_THREADS, the affinity mask and
// the cgroup CPU quota (fed from fixture trees through the parser's root argument and the
// HEIST_CGROUP_ROOT hook), the default sizes, and the version.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "heist/detail/config.hpp"
#include "heist/detail/platform/cpu_limits.hpp"
#include "heist/heist.hpp"

namespace {

namespace fs = std::filesystem;
using heist::detail::cgroup_cpu_quota;
using heist::detail::parse_num_threads;

// Sets (or unsets, nullptr) an environment variable for one test.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old, m_had = true;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~scoped_env() {
    if (m_had) {
      setenv(m_name.c_str(), m_old.c_str(), 1);
    } else {
      unsetenv(m_name.c_str());
    }
  }

 private:
  std::string m_name, m_old;
  bool m_had = false;
};

// A fixture tree: root/proc/self/{cgroup,mountinfo} and cgroup files under root.
class cgroup_tree {
 public:
  cgroup_tree() {
    m_root = fs::temp_directory_path() /
             ("heist-cgroup-" + std::to_string(getpid()) + "-" + std::to_string(++s_count));
    fs::remove_all(m_root);
    fs::create_directories(m_root / "proc/self");
  }
  ~cgroup_tree() { fs::remove_all(m_root); }
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = m_root / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return m_root.string(); }

  // A pure v2 system: the process in `path`, cgroup2 mounted at /sys/fs/cgroup.
  void v2(const std::string& path, const std::string& mount_root = "/") {
    write("proc/self/cgroup", "0::" + path + "\n");
    write("proc/self/mountinfo",
          "22 1 0:21 / / rw,relatime - ext4 /dev/sda1 rw\n"
          "30 22 0:26 " +
              mount_root + " /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  }
  // A v1 system: cpu,cpuacct mounted at /sys/fs/cgroup/cpu,cpuacct.
  void v1(const std::string& path) {
    write("proc/self/cgroup",
          "12:memory:/x\n4:cpu,cpuacct:" + path + "\n1:name=systemd:/user.slice\n");
    write("proc/self/mountinfo",
          "22 1 0:21 / / rw,relatime - ext4 /dev/sda1 rw\n"
          "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:7 - cgroup cgroup "
          "rw,cpu,cpuacct\n"
          "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n");
  }

 private:
  static inline int s_count = 0;
  fs::path m_root;
};

// --- HEIST_NUM_THREADS --------------------------------------------------------------------
TEST(Sizing, NumThreadsParsesValidValues) {
  EXPECT_FALSE(parse_num_threads(nullptr).has_value());
  EXPECT_EQ(parse_num_threads("1"), 1u);
  EXPECT_EQ(parse_num_threads("4"), 4u);
  EXPECT_EQ(parse_num_threads("4096"), 4096u);
}

TEST(Sizing, MalformedOrOutOfRangeNumThreadsIsAnErrorNamingIt) {
  for (const char* bad :
       {"", "0", "-1", "abc", "4x", " 4", "4 ", "4097", "1e3", "2.5", "99999999999999999999999"}) {
    try {
      parse_num_threads(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("HEIST_NUM_THREADS"), std::string::npos) << e.what();
    }
  }
}

TEST(Sizing, NumThreadsOverridesEverything) {
  scoped_env env("HEIST_NUM_THREADS", "3");
  EXPECT_EQ(heist::available_parallelism(), 3u);
  heist::executor ex;
  EXPECT_EQ(ex.num_workers(), 3u);
  heist::executor_options o;
  o.num_workers = 0;
  heist::executor ex2(o);
  EXPECT_EQ(ex2.num_workers(), 3u);
  EXPECT_STREQ(heist::detail::explain_parallelism().reason, "HEIST_NUM_THREADS");
}

TEST(Sizing, MalformedNumThreadsFailsTheDefaultSizedExecutor) {
  scoped_env env("HEIST_NUM_THREADS", "lots");
  EXPECT_THROW(heist::available_parallelism(), std::invalid_argument);
  try {
    heist::executor ex;
    ADD_FAILURE() << "executor() accepted HEIST_NUM_THREADS=lots";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("HEIST_NUM_THREADS"), std::string::npos);
  }
  // An explicit size does not consult the environment.
  heist::executor ex(2);
  EXPECT_EQ(ex.num_workers(), 2u);
}

// --- the affinity mask --------------------------------------------------------------------
TEST(Sizing, AffinityMaskLimitsTheCount) {
  scoped_env env("HEIST_NUM_THREADS", nullptr);
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const int first = [&] {
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &saved)) return i;
    return -1;
  }();
  ASSERT_GE(first, 0);
  EXPECT_EQ(heist::detail::affinity_cpu_count(), static_cast<std::size_t>(CPU_COUNT(&saved)));
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  // The mask of the calling thread (pid 0), which is what available_parallelism reads.
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const std::size_t n = heist::available_parallelism();
  std::size_t workers = 0;
  {
    heist::executor ex;
    workers = ex.num_workers();
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(workers, 1u);
}

TEST(Sizing, AffinityMaskOfAChildProcess) {
#if HEIST_TSAN || HEIST_ASAN
  GTEST_SKIP() << "fork() with sanitizer runtimes (see tests/process/fork_test.cpp)";
#else
  scoped_env env("HEIST_NUM_THREADS", nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(2);
    if (heist::available_parallelism() != 1) _exit(3);
    std::atomic<int> ran{0};
    {
      heist::executor ex;
      if (ex.num_workers() != 1) _exit(4);
      heist::task_group g;
      for (int i = 0; i < 100; ++i)
        g.run([&] { ran.fetch_add(1); });
      g.wait();
    }
    _exit(ran.load() == 100 ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: setaffinity, 3: count, 4: workers, 5: tasks";
#endif
}

// --- the cgroup quota ---------------------------------------------------------------------
TEST(CgroupQuota, V2QuotaAndMax) {
  cgroup_tree t;
  t.v2("/app.slice/job");
  t.write("sys/fs/cgroup/app.slice/job/cpu.max", "200000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 2.0);
  t.write("sys/fs/cgroup/app.slice/job/cpu.max", "max 100000\n");
  EXPECT_FALSE(cgroup_cpu_quota(t.root()).has_value());
  t.write("sys/fs/cgroup/app.slice/job/cpu.max", "150000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 1.5);
}

TEST(CgroupQuota, V2NestedLimitOfAnAncestorApplies) {
  cgroup_tree t;
  t.v2("/kubepods/pod1/ctr");
  t.write("sys/fs/cgroup/kubepods/cpu.max", "max 100000\n");
  t.write("sys/fs/cgroup/kubepods/pod1/cpu.max", "50000 100000\n");
  t.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 0.5);
  // The smallest wins wherever it is.
  t.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "25000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 0.25);
}

TEST(CgroupQuota, V2ContainerSeesItsCgroupAsTheMountRoot) {
  cgroup_tree t;
  // A cgroup namespace: /proc/self/cgroup says "/", the mount shows the container's group.
  t.v2("/", "/docker/abc");
  t.write("sys/fs/cgroup/cpu.max", "300000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 3.0);
  // Without a namespace: the full path, and a mount root that is its prefix.
  cgroup_tree u;
  u.v2("/docker/abc/inner", "/docker/abc");
  u.write("sys/fs/cgroup/inner/cpu.max", "100000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(u.root()), 1.0);
}

TEST(CgroupQuota, V1QuotaOverPeriod) {
  cgroup_tree t;
  t.v1("/docker/abc");
  t.write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
  t.write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 2.5);
  t.write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  EXPECT_FALSE(cgroup_cpu_quota(t.root()).has_value());
  // A parent's quota applies.
  t.write("sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "100000\n");
  t.write("sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 1.0);
}

TEST(CgroupQuota, HybridTakesTheSmaller) {
  cgroup_tree t;
  t.write("proc/self/cgroup", "4:cpu,cpuacct:/\n0::/\n");
  t.write("proc/self/mountinfo",
          "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
          "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
          "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  // v2 mounted without the cpu controller: no cpu.max there.
  EXPECT_FALSE(cgroup_cpu_quota(t.root()).has_value());
  t.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "300000");
  t.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 3.0);
  t.write("sys/fs/cgroup/unified/cpu.max", "100000 100000");
  EXPECT_EQ(cgroup_cpu_quota(t.root()), 1.0);
}

TEST(CgroupQuota, MissingOrGarbageMeansNoLimit) {
  cgroup_tree empty;  // no /proc files at all
  EXPECT_FALSE(cgroup_cpu_quota(empty.root()).has_value());
  EXPECT_FALSE(cgroup_cpu_quota("/nonexistent/heist/root").has_value());
  for (const char* garbage :
       {"", "garbage", "100000", "-5 100000", "100000 0", "0 100000", "1x 100000", "\n\n", "max"}) {
    cgroup_tree t;
    t.v2("/a");
    t.write("sys/fs/cgroup/a/cpu.max", garbage);
    EXPECT_FALSE(cgroup_cpu_quota(t.root()).has_value()) << "cpu.max \"" << garbage << "\"";
  }
  cgroup_tree bad_proc;
  bad_proc.write("proc/self/cgroup", "nonsense without colons\n::\n7\n");
  bad_proc.write("proc/self/mountinfo", "garbage line\n - \n1 2 3\n");
  EXPECT_FALSE(cgroup_cpu_quota(bad_proc.root()).has_value());
  cgroup_tree no_mount;  // the cgroup is named but the hierarchy is not mounted
  no_mount.write("proc/self/cgroup", "0::/a\n");
  no_mount.write("proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n");
  EXPECT_FALSE(cgroup_cpu_quota(no_mount.root()).has_value());
}

TEST(CgroupQuota, QuotaRoundsUpAndLimitsTheDefaultExecutorSize) {
  scoped_env env("HEIST_NUM_THREADS", nullptr);
  const std::size_t affinity = heist::detail::affinity_cpu_count().value_or(1);
  cgroup_tree t;
  t.v2("/job");
  t.write("sys/fs/cgroup/job/cpu.max", "50000 100000");  // half a CPU: one thread
  scoped_env root("HEIST_CGROUP_ROOT", t.root().c_str());
  EXPECT_EQ(heist::available_parallelism(), 1u);
  {
    heist::executor ex;
    EXPECT_EQ(ex.num_workers(), 1u);
  }
  if (affinity >= 2) {
    t.write("sys/fs/cgroup/job/cpu.max", "150000 100000");  // 1.5 CPUs: two threads
    EXPECT_EQ(heist::available_parallelism(), 2u);
    EXPECT_STREQ(heist::detail::explain_parallelism().reason,
                 affinity > 2 ? "cgroup CPU quota" : "affinity mask");
  }
  // A quota above the affinity count does not raise it.
  t.write("sys/fs/cgroup/job/cpu.max", "100000000 100000");
  EXPECT_EQ(heist::available_parallelism(), affinity);
}

TEST(Sizing, AlwaysAtLeastOne) {
  scoped_env env("HEIST_NUM_THREADS", nullptr);
  EXPECT_GE(heist::available_parallelism(), 1u);
  EXPECT_LE(heist::available_parallelism(), heist::detail::k_max_workers);
}

// --- version --------------------------------------------------------------------------------
TEST(Version, MacroAndFunctionAgree) {
  const heist::version_info v = heist::version();
  EXPECT_EQ(v.major, HEIST_VERSION_MAJOR);
  EXPECT_EQ(v.minor, HEIST_VERSION_MINOR);
  EXPECT_EQ(v.patch, HEIST_VERSION_PATCH);
  EXPECT_EQ(HEIST_VERSION, v.major * 10000 + v.minor * 100 + v.patch);
  EXPECT_EQ(std::string(v.string), std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
                                       std::to_string(v.patch));
  EXPECT_STREQ(v.string, HEIST_VERSION_STRING);
}

}  // namespace
