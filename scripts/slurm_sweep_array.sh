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
# Kubernetes: an Indexed Job (completionMode: Indexed, completions: 8, parallelism: 8, one GPU
# per pod) sets JOB_COMPLETION_INDEX in each pod; run
#   mha-tune sweep --config configs/default.json --shard ${JOB_COMPLETION_INDEX}/8 \
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

if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  # Not inside Slurm: submit the array and the merge that waits for all of it to succeed.
  mkdir -p results/shards  # sbatch opens the --output logs there before the job starts
  jobid=$(sbatch --parsable "$0")
  sbatch --dependency=afterok:"${jobid}" --job-name=mha-merge \
         --output=results/shards/slurm_merge_%j.log \
         --wrap "build/mha-tune merge results/shards/shard_*.json --out results/merged"
  echo "submitted sweep array ${jobid} and its merge (results/merged.json)"
  exit 0
fi

# Slurm exposes the one allocated GPU as device 0 (CUDA_VISIBLE_DEVICES), so --device stays 0.
mkdir -p results/shards
resume=()
if [[ -f "results/shards/shard_${SLURM_ARRAY_TASK_ID}.journal.jsonl" ]]; then
  resume=(--resume)  # a requeued or rerun task continues where it stopped
fi
exec build/mha-tune sweep --config configs/default.json \
    --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" \
    --out "results/shards/shard_${SLURM_ARRAY_TASK_ID}" ${resume[@]+"${resume[@]}"}
