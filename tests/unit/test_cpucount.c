/* The --jobs default honours the cgroup's CPU quota (thread_posix.c):
 * cdd_cgroup_cpu_limit on fake cgroup trees, v2 and v1, nested limits, no
 * limit, malformed files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/thread.h"
#include "fixture.h"
#include "test.h"

static const char *root;

static void put(const char *rel, const char *text)
{
    CHECK_INT(fx_put(root, rel, text), 0);
}

/* A fresh, empty fake root of /sys and /proc. */
static void fresh(void)
{
    root = fx_scratch("cgroup");
}

static int limit(void)
{
    return cdd_cgroup_cpu_limit(fx_path(root, "sys"), fx_path(root, "proc-cgroup"));
}

static void test_v2_quota_is_rounded_up(void)
{
    fresh();
    put("proc-cgroup", "0::/docker/abc\n");
    put("sys/cpu.max", "max 100000\n");
    put("sys/docker/abc/cpu.max", "150000 100000\n");
    CHECK_INT(limit(), 2);
    put("sys/docker/abc/cpu.max", "200000 100000\n");
    CHECK_INT(limit(), 2);
    put("sys/docker/abc/cpu.max", "50000 100000\n");
    CHECK_INT(limit(), 1);
}

static void test_v2_parent_limit_binds(void)
{
    fresh();
    put("proc-cgroup", "0::/a/b\n");
    put("sys/a/cpu.max", "300000 100000\n");
    put("sys/a/b/cpu.max", "max 100000\n");
    CHECK_INT(limit(), 3);
    put("sys/a/b/cpu.max", "800000 100000\n");
    CHECK_INT(limit(), 3);
}

static void test_v2_namespace_root(void)
{
    /* Inside a cgroup namespace the process sees "/" and its own limit at
     * the mount's top. */
    fresh();
    put("proc-cgroup", "0::/\n");
    put("sys/cpu.max", "400000 100000\n");
    CHECK_INT(limit(), 4);
}

static void test_v2_no_limit(void)
{
    fresh();
    put("proc-cgroup", "0::/user.slice\n");
    put("sys/user.slice/cpu.max", "max 100000\n");
    CHECK_INT(limit(), 0);
}

static void test_v1_quota(void)
{
    fresh();
    put("proc-cgroup", "12:memory:/x\n4:cpu,cpuacct:/docker/abc\n");
    put("sys/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
    put("sys/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    CHECK_INT(limit(), 3);
    put("sys/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    CHECK_INT(limit(), 0);
}

static void test_v1_host_path_not_under_mount(void)
{
    /* No cgroup namespace: the host's path, the container's cgroup at the
     * mount's top. */
    fresh();
    put("proc-cgroup", "4:cpu,cpuacct:/kubepods/pod1/c1\n");
    put("sys/cpu,cpuacct/cpu.cfs_quota_us", "100000\n");
    put("sys/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    CHECK_INT(limit(), 1);
}

static void test_malformed_and_missing_are_no_limit(void)
{
    fresh();
    CHECK_INT(limit(), 0); /* no proc file */
    put("proc-cgroup", "0::/a\n");
    CHECK_INT(limit(), 0); /* no cpu.max */
    put("sys/a/cpu.max", "lots 100000\n");
    CHECK_INT(limit(), 0);
    put("sys/a/cpu.max", "100000 0\n");
    CHECK_INT(limit(), 0);
    put("sys/a/cpu.max", "-5 100000\n");
    CHECK_INT(limit(), 0);
    put("proc-cgroup", "garbage\n");
    CHECK_INT(limit(), 0);
}

static void test_cpu_count_is_at_least_one(void)
{
    CHECK(cdd_cpu_count() >= 1);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(TEST(test_v2_quota_is_rounded_up), TEST(test_v2_parent_limit_binds),
          TEST(test_v2_namespace_root), TEST(test_v2_no_limit),
          TEST(test_v1_quota), TEST(test_v1_host_path_not_under_mount),
          TEST(test_malformed_and_missing_are_no_limit),
          TEST(test_cpu_count_is_at_least_one))
