#!/bin/sh
# End to end through a real executable: NumPy writes the input, the C model
# (CModel.c, y = 2x + 1) runs, NumPy checks the output; then the exit codes
# of a bad input and of --mode train.  Usage: c_model_test.sh MODEL TMPDIR
set -eu
model=$1
dir=$2/c-model-test
rm -rf "$dir"
mkdir -p "$dir"
/usr/bin/python3 -c "import numpy as np; np.save('$dir/x.npy', np.array([[1, 2], [3, 4]], np.float64))"
"$model" --mode infer --input x="$dir/x.npy" --output-dir "$dir/out" --repeat 2
/usr/bin/python3 -c "
import numpy as np
y = np.load('$dir/out/y.npy')
assert y.dtype == np.float32 and (y == [[3, 5], [7, 9]]).all(), y"
/usr/bin/python3 -c "import numpy as np; np.save('$dir/bad.npy', np.zeros((3, 2), np.float32))"
rc=0
"$model" --input x="$dir/bad.npy" --output-dir "$dir/out" 2>"$dir/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "expected shape f32 \[2, 2\], got f32 \[3, 2\]" "$dir/err"
rc=0
"$model" --mode train 2>/dev/null || rc=$?
[ "$rc" -eq 2 ]
echo "c_model_test: ok"
