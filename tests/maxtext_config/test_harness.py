"""The harness's own pieces, without MaxText: Kubernetes' $(VAR) expansion, the argv handed to
MaxText's loader, and the child Jobs made from a JobSet."""

from pathlib import Path

import harness


def test_kubernetes_var_expansion() -> None:
  env = {"RUN": "r1", "N": "8"}
  assert harness.expand_kubernetes_vars("run_name=$(RUN)", env) == "run_name=r1"
  assert harness.expand_kubernetes_vars("$(RUN)-$(N)", env) == "r1-8"
  assert harness.expand_kubernetes_vars("$$(RUN)", env) == "$(RUN)"  # $$ escapes
  assert harness.expand_kubernetes_vars("$(UNSET) $HOME $(", env) == "$(UNSET) $HOME $("  # left as written


def test_pyconfig_argv_maps_modules_and_mounted_paths(tmp_path: Path) -> None:
  (tmp_path / "etc" / "maxtext").mkdir(parents=True)
  (tmp_path / "etc" / "maxtext" / "config.yml").write_text("base_config: base.yml\n")
  argv = harness.pyconfig_argv(["python3", "-m", "MaxText.train", "/etc/maxtext/config.yml", "/data/x", "k=v"],
                               tmp_path)
  assert argv == ["train.py", str(tmp_path / "etc" / "maxtext" / "config.yml"), "/data/x", "k=v"]
  assert harness.pyconfig_argv(["python3", "MaxText/train.py", "MaxText/configs/base.yml"], tmp_path) == [
      "MaxText/train.py", "MaxText/configs/base.yml"]


def test_child_jobs_carry_the_jobset_labels() -> None:
  jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "ns", "annotations": {"graintune.dev/dataset": "c4"}},
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": 2, "template": {
                "metadata": {"annotations": {"graintune.dev/dataset": "c4"}},
                "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}}]}}
  [(job, replicas)] = harness.child_jobs(jobset, attempt=3)
  assert replicas == 2
  assert job["kind"] == "Job" and job["metadata"]["name"] == "js-slice-0" and job["metadata"]["namespace"] == "ns"
  for labels in (job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"]):
    assert labels["jobset.sigs.k8s.io/jobset-name"] == "js"
    assert labels["jobset.sigs.k8s.io/restart-attempt"] == "3"
  assert job["metadata"]["annotations"] == {"graintune.dev/dataset": "c4"}
  assert "labels" not in jobset["spec"]["replicatedJobs"][0]["template"]["metadata"]  # input untouched
