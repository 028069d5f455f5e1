// The launcher's process primitives, shared by the practice lap (lap_process.h), the compile
// watcher (compile_watch.h) and the trainer's exec: argv in the form exec takes, and waiting,
// bounded in time, for a process to end, through a pidfd where the kernel has them (5.3 and
// later) and by looking every 100 ms where it has not. The waited process may be a child of the
// launcher (the lap) or not (the trainer, for the watcher); nothing here reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace graintune::launcher {

// Pointers into `argv`'s strings, ending in nullptr, for execv/execvp: valid while `argv` lives.
std::vector<char*> ExecArgv(const std::vector<std::string>& argv);

// A pidfd for `pid` (close it when done), or -1 where the kernel has none.
int OpenPidFd(pid_t pid);

// Whether `pid` has ended: an exited child not yet reaped, or any process that is gone or a zombie.
bool HasEnded(pid_t pid);

enum class Waited { kEnded, kTimedOut, kSignalled };

// Waits until `pid` (its `pidfd`, or -1) ends, `wait` passes, or a signal arrives on `signal_fd`
// (a signalfd, or -1 for none; kSignalled reads the signal, so it is not delivered again).
Waited WaitForEnd(int pidfd, pid_t pid, std::chrono::milliseconds wait, int signal_fd = -1);

// Whether a signal came through `signal_fd` (read, so it is not delivered again).
bool TakeSignal(int signal_fd);

}  // namespace graintune::launcher
