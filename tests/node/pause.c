/*
 * graintune-pause: the sandbox ("infra") container of the test node's pods, which holds the pod's
 * namespaces while its containers come and go. Written for graintune's node tests; containerd's
 * sandbox_image (or kubelet's --pod-infra-container-image) points at the image scripts/image.sh
 * builds from it (docs/images.md).
 *
 * Contract:
 *   - Runs as PID 1 of the pod's PID namespace (when the pod shares it) and takes no arguments
 *     except -v (prints its version and exits 0).
 *   - Sleeps until SIGTERM or SIGINT, then exits 0 at once (the CRI stops a sandbox that way).
 *   - Reaps every child that becomes its own (orphans reparented to PID 1 when the pod shares its
 *     PID namespace), so none stays a zombie.
 *   - Ignores SIGHUP, SIGPIPE, SIGUSR1 and SIGUSR2 (whose default action would end it) and logs
 *     nothing. Built statically: the image holds this one file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRAINTUNE_PAUSE_VERSION "1.0"

static volatile sig_atomic_t stop_requested = 0;

static void on_stop(int signo) {
  (void)signo;
  stop_requested = 1;
}

/* Nothing to do here: the point is that SIGCHLD interrupts sigsuspend, then the loop reaps. */
static void on_child(int signo) { (void)signo; }

static void install(int signo, void (*handler)(int)) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  if (sigaction(signo, &action, NULL) != 0) {
    fprintf(stderr, "pause: sigaction(%d): %s\n", signo, strerror(errno));
    _exit(2);
  }
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "-v") == 0) {
    printf("graintune-pause %s\n", GRAINTUNE_PAUSE_VERSION);
    return 0;
  }
  if (argc != 1) {
    fprintf(stderr, "usage: pause [-v]\n");
    return 2;
  }
  /* Block the signals we wait for, so none can arrive between the checks and sigsuspend. */
  sigset_t waited, previous;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGINT);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, &previous);
  install(SIGTERM, on_stop);
  install(SIGINT, on_stop);
  install(SIGCHLD, on_child);
  install(SIGHUP, SIG_IGN);
  install(SIGPIPE, SIG_IGN);
  install(SIGUSR1, SIG_IGN);
  install(SIGUSR2, SIG_IGN);
  sigset_t during;
  sigemptyset(&during); /* everything unblocked while suspended */
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    if (stop_requested) return 0;
    sigsuspend(&during);
  }
}
