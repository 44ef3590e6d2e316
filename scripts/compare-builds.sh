#!/usr/bin/env bash
# Compiles every zoo model with two builds of gnnc and compares, byte for
# byte, the executables' --dump output (one training step at a fixed seed:
# loss, logits, parameters, every gradient) and the losses of a 3-epoch run.
# For changes that must not move a number (refactorings of the lowering or the
# runtime). Usage: scripts/compare-builds.sh OLD_BUILD_DIR NEW_BUILD_DIR
set -u
old=$1; new=$2; root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd); ds=$root/examples/datasets/polblogs
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in $root/examples/models/*.mlir; do
  n=$(basename $m .mlir)
  for which in old new; do
    b=$old; [ $which = new ] && b=$new
    $b/bin/gnn-compile $m -o $tmp/$n-$which 2>/dev/null || { echo "compile failed: $n $which"; fail=1; }
    $tmp/$n-$which --data $ds --seed 11 --threads 2 --dump $tmp/$n-$which.dump.d >/dev/null 2>&1
    $tmp/$n-$which --data $ds --seed 11 --threads 2 --epochs 3 --quiet --json $tmp/$n-$which.json >/dev/null 2>&1
  done
  if [ -f $tmp/$n-new.dump.d/loss.npy ] && [ -s $tmp/$n-new.json ] && diff -r -q $tmp/$n-old.dump.d $tmp/$n-new.dump.d >/dev/null && cmp -s <(grep -o '"loss[^,]*' $tmp/$n-old.json) <(grep -o '"loss[^,]*' $tmp/$n-new.json); then
    echo "same: $n ($(cat $tmp/$n-new.dump.d/*/* $tmp/$n-new.dump.d/*.npy | wc -c) dump bytes)"
  else echo "DIFFERENT: $n"; fail=1; fi
done
exit $fail
