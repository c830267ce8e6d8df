#!/usr/bin/env bash
# A sweep split across 8 GPUs (one per Slurm array task, on any nodes), then merged.
#
# Usage, from the repository root, after building build/mha-tune on a node like the compute ones:
#   scripts/slurm_sweep_array.sh            # submits the array and the dependent merge job
# or by hand:
#   jobid=$(sbatch --parsable scripts/slurm_sweep_array.sh)
#   sbatch --dependency=afterok:${jobid} --wrap \
#       "build/mha-tune merge results/shards/shard_*.json --out results/merged"
#
# Each task runs `mha-tune sweep --shard K/N`: every task computes the same deterministic
# assignment of points to shards from the config (balanced by estimated cost), runs its own,
# and writes results/shards/shard_K.{json,csv,journal.jsonl}. Shards must use one GPU model:
# merge refuses mixed GPUs (pin the partition or add --constraint). A task that dies can be
# rerun alone with --resume (its journal keeps what was measured): the merge only checks that
# every shard 0..N-1 is present and that all come from the same sweep (config hash and command
# line without --shard/--out).
#
# Arguments of the submitting call go to the array's sbatch (e.g. --array=0-3 --partition=h200);
# they override the #SBATCH lines below. The environment may override what the tasks run:
#   MHA_TUNE_BINARY (build/mha-tune), MHA_SWEEP_CONFIG (configs/suites/default.json),
#   MHA_SHARD_DIR (results/shards), MHA_SWEEP_ARGS (extra sweep arguments, e.g. "--dry-run
#   --json": each task then prints its shard's plan into its log and no merge is submitted).
# Shard K of N is the task's index within the array (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN)
# of SLURM_ARRAY_TASK_COUNT tasks, so --array=1-8 works as well as 0-7.
#
# Kubernetes: an Indexed Job (completionMode: Indexed, completions: 8, parallelism: 8, one GPU
# per pod) sets JOB_COMPLETION_INDEX in each pod; run
#   mha-tune sweep --config configs/suites/default.json --shard ${JOB_COMPLETION_INDEX}/8 \
#       --out /results/shards/shard_${JOB_COMPLETION_INDEX}
# with /results on a shared volume, and the merge as a second Job once the first completes.
#
#SBATCH --job-name=mha-sweep
#SBATCH --array=0-7
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --time=04:00:00
#SBATCH --output=results/shards/slurm_%A_%a.log
set -euo pipefail

binary=${MHA_TUNE_BINARY:-build/mha-tune}
config=${MHA_SWEEP_CONFIG:-configs/suites/default.json}
shard_dir=${MHA_SHARD_DIR:-results/shards}
read -r -a extra <<< "${MHA_SWEEP_ARGS:-}"

if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  # Not inside Slurm: submit the array and the merge that waits for all of it to succeed.
  mkdir -p results/shards "${shard_dir}"  # sbatch opens the --output logs before the job starts
  jobid=$(sbatch --parsable "$@" "$0")
  jobid=${jobid%%;*}  # "id;cluster" on federated setups
  if [[ " ${extra[*]-} " == *" --dry-run "* ]]; then
    echo "submitted dry-run array ${jobid}: each task's plan is in its log"
    exit 0
  fi
  sbatch --dependency=afterok:"${jobid}" --job-name=mha-merge \
         --output="${shard_dir}/slurm_merge_%j.log" \
         --wrap "${binary} merge ${shard_dir}/shard_*.json --out results/merged"
  echo "submitted sweep array ${jobid} and its merge (results/merged.json)"
  exit 0
fi

# Slurm exposes the one allocated GPU as device 0 (CUDA_VISIBLE_DEVICES), so --device stays 0.
shard=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
mkdir -p "${shard_dir}"
resume=()
if [[ -f "${shard_dir}/shard_${shard}.journal.jsonl" ]]; then
  resume=(--resume)  # a requeued or rerun task continues where it stopped
fi
exec "${binary}" sweep --config "${config}" \
    --shard "${shard}/${SLURM_ARRAY_TASK_COUNT}" \
    --out "${shard_dir}/shard_${shard}" ${resume[@]+"${resume[@]}"} ${extra[@]+"${extra[@]}"}
