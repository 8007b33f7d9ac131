/* gnuplot.c: the one way Narwhal runs gnuplot: posix_spawn of the gnuplot on the PATH, script on stdin, PNG on stdout. */
#define _GNU_SOURCE /* posix_spawn_file_actions_addfchdir_np: the child's directory, set without a shell */
#include "gnuplot.h"
#include "ana.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The file actions of the child: stdin, stdout, then the directory (opened
 * by the caller, so that ENOENT from the spawn can only mean no gnuplot). */
static int child_actions(posix_spawn_file_actions_t *fa, int script_fd, int png_fd, int dir_fd)
{
    int err = posix_spawn_file_actions_init(fa);
    if (err)
        return err;
    if (!(err = posix_spawn_file_actions_adddup2(fa, script_fd, 0)) &&
        !(err = posix_spawn_file_actions_adddup2(fa, png_fd, 1)) && dir_fd >= 0)
        err = posix_spawn_file_actions_addfchdir_np(fa, dir_fd);
    if (err)
        posix_spawn_file_actions_destroy(fa);
    return err;
}

static int spawn(int script_fd, int png_fd, int dir_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    char *argv[] = {"gnuplot", NULL};
    int err = child_actions(&fa, script_fd, png_fd, dir_fd);
    if (err)
        return err;
    err = posix_spawnp(pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return err;
}

static int wait_for(pid_t pid, char *msg, size_t len)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return ana_fail(msg, len, ANA_E_PLOT, "gnuplot: waitpid: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return ANA_OK;
    if (WIFEXITED(status))
        return ana_fail(msg, len, ANA_E_PLOT, "gnuplot failed (exit %d; its message is above)", WEXITSTATUS(status));
    return ana_fail(msg, len, ANA_E_PLOT, "gnuplot was killed by signal %d", WTERMSIG(status));
}

int ana_gnuplot_run(int script_fd, int png_fd, const char *dir, char *msg, size_t len)
{
    /* the child copies script_fd onto 0 first: a png_fd of 0 would be lost */
    if (script_fd < 0 || png_fd <= 0)
        return ana_fail(msg, len, ANA_E_PLOT, "gnuplot: bad descriptors (script %d, output %d)", script_fd, png_fd);
    int dir_fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dir && dir_fd < 0)
        return ana_fail(msg, len, ANA_E_PLOT, "%s: cannot run gnuplot there: %s", dir, strerror(errno));
    pid_t pid;
    int err = spawn(script_fd, png_fd, dir_fd, &pid);
    if (dir_fd >= 0)
        close(dir_fd);
    if (err == ENOENT)
        return ana_fail(msg, len, ANA_E_NO_GNUPLOT, "gnuplot is not installed (apt-get install gnuplot-nox)");
    if (err)
        return ana_fail(msg, len, ANA_E_PLOT, "gnuplot could not be started: %s", strerror(err));
    return wait_for(pid, msg, len);
}
