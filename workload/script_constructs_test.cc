#include "workload/script_constructs.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

std::optional<UnevaluatedConstruct> First(const std::string& script) {
  return FirstUnevaluatedConstruct(script, SplitShellWords(script));
}

TEST(ScriptConstructs, WhatTheReaderEvaluatesHasNothingUnevaluated) {
  for (const std::string script : {
           "python3 -m MaxText.train base.yml grain_worker_count=-1",
           "set -e; set -o pipefail; set -eux; cd /app && export A=1 B=\"x y\" && python3 -m MaxText.train $A",
           "readonly R=1; local L=2; declare D=3; typeset T=4; : \"${X:=5}\"; M_STEPS=10 python3 train.py",
           "echo start | tee log && python3 -m MaxText.train base.yml || exit 1",
           "set +o posix; set -o errexit -o nounset; python3 -m MaxText.train base.yml",
           // xpk's wrapper: a SIGTERM handler defined and trapped, never called; a group.
           "_sigterm() (kill -SIGTERM $! 2>/dev/null;); trap _sigterm SIGTERM; { A=1; }; "
           "(python3 -m maxtext.trainers.pre_train.train base.yml) & PID=$!;",
       }) {
    const std::optional<UnevaluatedConstruct> c = First(script);
    EXPECT_FALSE(c) << script << ": " << (c ? c->what : "");
  }
}

TEST(ScriptConstructs, EachConstructTheReaderDoesNotFollowIsNamedAtItsCommand) {
  struct Case {
    std::string script;
    size_t command;
    std::string named;
  };
  const std::vector<Case> cases = {
      {"A=1; . /etc/data/data.env; python3 -m MaxText.train base.yml", 1, "`. /etc/data/data.env`"},
      {"source /etc/env && python3 train.py", 0, "`source /etc/env`"},
      {"eval \"$(cat /args)\"; python3 -m MaxText.train", 0, "`eval"},
      {"set -- a b; python3 -m MaxText.train \"$@\"", 0, "`set` with positional"},
      {"set -a; A=1", 0, "allexport"},
      {"set -o allexport; A=1", 0, "allexport"},
      {"shift; python3 -m MaxText.train \"$@\"", 0, "`shift"},
      {"ARGS=(a b); python3 -m MaxText.train \"${ARGS[@]}\"", 0, "an array assignment"},
      {"X=1; ARGS+=(enable_checkpointing=false); python3 -m MaxText.train", 1, "an array assignment"},
      {"declare -a ARGS; python3 -m MaxText.train", 0, "`declare -a`"},
      {"export -n M_STEPS; python3 -m MaxText.train", 0, "`export -n`"},
      {"run() { python3 -m MaxText.train \"$@\"; }; run grain_worker_count=-1", 0, "a function (run())"},
      {"function run { python3 -m MaxText.train; }; run x=1", 0, "a function (run())"},
      {"if [ \"$DS\" = hf ]; then A=1; fi; python3 -m MaxText.train", 0, "`if"},
      {"python3 -m MaxText.train base.yml; case $X in a) B=1;; esac", 1, "`case"},
      {"for f in a b; do echo $f; done", 0, "`for"},
      {"while read l; do echo $l; done < f", 0, "`while"},
      {"[[ -n $X ]] && A=1", 0, "`[["},
      // ShellWords starts a new simple command at a redirection (`> /tmp/c.yml` is command 1).
      {"cat > /tmp/c.yml <<EOF\nenable_checkpointing: false\nEOF\npython3 -m MaxText.train /tmp/c.yml", 1,
       "a here-document"},
      {"unset M_ENABLE_CHECKPOINTING; python3 train.py", 0, "`unset"},
      {"read -r X < /etc/x; python3 train.py", 0, "`read"},
      {"printf -v X %s 1; python3 train.py", 0, "`printf -v`"},

  };
  for (const Case& c : cases) {
    const std::optional<UnevaluatedConstruct> found = First(c.script);
    ASSERT_TRUE(found) << c.script;
    EXPECT_EQ(found->command, c.command) << c.script << ": " << found->what;
    EXPECT_NE(found->what.find(c.named), std::string::npos) << c.script << ": " << found->what;
  }
}

}  // namespace
}  // namespace graintune::workload
