#!/bin/bash
# Queues the shards as a job array and the merge to run once all of them have succeeded:
#   SIM=/path/to/sim SCENARIO=scenarios/failover.toml RESULTS=$PWD/results examples/slurm/submit.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shards=$(sbatch --parsable --export=ALL "$here/shards.sbatch")
# --parsable prints "jobid" or "jobid;cluster".
sbatch --dependency="afterok:${shards%%;*}" --export=ALL "$here/merge.sbatch"
