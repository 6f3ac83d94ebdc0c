#!/usr/bin/env bash
# `make test-export`: every model kind and option a run can have, trained a few
# steps, exported to PyTorch (seqgrad export), checked there (check.py: logits
# within 1e-4 of the largest, loss within 1e-5, one PyTorch step lowers the
# loss), and brought back (seqgrad import), from the export's file and from one
# PyTorch wrote (model.py's save_weights): the weights come back bit for bit.
#
# usage: tests/export/test_export.sh BINARY [PYTHON]
set -euo pipefail
seqgrad=$(realpath "$1")
python=${2:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# name | train options (each trained 5 steps at d_model 32 unless it says otherwise)
variants=(
  "rnn|--model rnn"
  "rnn-2-layers|--model rnn --layers 2"
  "rnn-orthogonal-lm|--model rnn --init orthogonal --task lm"
  "lstm|--model lstm"
  "lstm-2-layers-dropout|--model lstm --layers 2 --dropout 0.1"
  "lstm-adding|--model lstm --task adding"
  "gru|--model gru"
  "gru-2-layers|--model gru --layers 2"
  "gru-recall|--model gru --task recall"
  "transformer|--model transformer"
  "transformer-learned|--model transformer --pos learned"
  "transformer-rope|--model transformer --pos rope"
  "transformer-no-positions|--model transformer --pos none"
  "transformer-pre-ln|--model transformer --pre-ln"
  "transformer-pre-ln-rope|--model transformer --pre-ln --pos rope"
  "transformer-gelu|--model transformer --activation gelu"
  "transformer-no-ffn|--model transformer --no-ffn"
  "transformer-no-ffn-pre-ln|--model transformer --no-ffn --pre-ln"
  "transformer-tie-qk|--model transformer --tie-qk"
  "transformer-no-value|--model transformer --no-value"
  "transformer-tie-kv|--model transformer --tie-kv"
  "transformer-tie-kv-rope|--model transformer --tie-kv --pos rope"
  "transformer-not-causal|--model transformer --no-causal --task recall"
  "transformer-no-scale|--model transformer --no-scale"
  "transformer-1-head-1-layer|--model transformer --heads 1 --layers 1"
  "transformer-8-heads-3-layers|--model transformer --heads 8 --layers 3"
  "transformer-ffn-2-dropout|--model transformer --ffn-mult 2 --dropout 0.1"
  "transformer-adding|--model transformer --task adding"
  "transformer-lm|--model transformer --task lm --pos rope --pre-ln"
  "transformer-recall-tied|--model transformer --task recall --tie-qk --activation gelu --pos learned"
  "transformer-linear|--model transformer --attention linear --task assoc --keys 12 --len 6"
  "transformer-linear-rope-not-causal|--model transformer --attention linear --pos rope --no-causal --task recall"
)

# Loads an export's weights in PyTorch and saves them again with save_weights, into folder $2.
resave() {
  "$python" - "$1" "$2" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from model import Model, load_weights, save_weights
os.makedirs(sys.argv[2])
save_weights(load_weights(Model(), os.path.join(sys.argv[1], "weights.safetensors")), os.path.join(sys.argv[2], "weights.safetensors"))
PY
}

failed=0
for v in "${variants[@]}"; do
  name=${v%%|*}
  opts=${v#*|}
  # shellcheck disable=SC2086
  if ! "$seqgrad" train $opts --d-model 32 --steps 5 --batch 8 --eval-size 8 --out "run-$name" >/dev/null 2>"train-$name.err"; then
    echo "FAIL $name: seqgrad train $opts"; sed "s/^/    /" "train-$name.err"; failed=1; continue
  fi
  "$seqgrad" export "run-$name" --out "pt-$name" >/dev/null
  if ! out=$("$python" "pt-$name/check.py" 2>&1); then
    echo "FAIL $name: check.py"; echo "$out" | sed 's/^/    /'; failed=1; continue
  fi
  # Back: the export's own file, then one that PyTorch wrote.
  "$seqgrad" import "pt-$name" --out "back-$name" >/dev/null
  "$seqgrad" export "back-$name" --out "again-$name" >/dev/null
  resave "pt-$name" "saved-$name"
  "$seqgrad" import "saved-$name" --out "from-torch-$name" >/dev/null
  "$seqgrad" export "from-torch-$name" --out "torch-again-$name" >/dev/null
  if ! cmp -s "pt-$name/weights.safetensors" "again-$name/weights.safetensors" ||
     ! cmp -s "pt-$name/weights.safetensors" "torch-again-$name/weights.safetensors"; then
    echo "FAIL $name: export, import and export again do not give the same weights file"; failed=1; continue
  fi
  echo "ok   $name: logits $(echo "$out" | grep '^logits' | cut -d, -f1 | sed 's/logits: //'), loss difference $(echo "$out" | grep -o 'difference [0-9.e+-]* (pass: at most 1e-5)' | cut -d' ' -f2); $(echo "$out" | grep -o "loss [0-9.e-]* -> [0-9.e-]*")"
done
# A teacher's way back: a model trained further in PyTorch (20 Adam steps; the LSTM's bias_hh no
# longer 0), saved, imported, and exported again: seqgrad's logits on the held-out batch are PyTorch's.
for name in lstm-2-layers-dropout transformer-pre-ln-rope gru-recall transformer-linear; do
  "$python" - "pt-$name" "trained-$name" <<'PY'
import os, sys, torch
sys.path.insert(0, sys.argv[1])
from model import Model, load_weights, save_weights, read_safetensors, model_input, loss_of
torch.manual_seed(0)
model = load_weights(Model(), os.path.join(sys.argv[1], "weights.safetensors"))
batch, _ = read_safetensors(os.path.join(sys.argv[1], "batch.safetensors"))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(20):
    optimizer.zero_grad()
    loss_of(model(model_input(batch)), batch).backward()
    optimizer.step()
os.makedirs(sys.argv[2])
save_weights(model, os.path.join(sys.argv[2], "weights.safetensors"))
PY
  "$seqgrad" import "trained-$name" --out "run-trained-$name" >/dev/null
  "$seqgrad" export "run-trained-$name" --out "pt-trained-$name" >/dev/null
  if ! out=$("$python" - "trained-$name" "pt-trained-$name" 2>&1 <<'PY'
import os, sys, torch
sys.path.insert(0, sys.argv[2])
from model import Model, load_weights, read_safetensors, model_input
model = load_weights(Model(), os.path.join(sys.argv[1], "weights.safetensors")).eval()
batch, _ = read_safetensors(os.path.join(sys.argv[2], "batch.safetensors"))
with torch.no_grad():
    logits = model(model_input(batch))
largest = (logits - batch["logits"]).abs().max().item() / batch["logits"].abs().max().item()
print(f"seqgrad's logits from the weights PyTorch trained: {largest:.2e} of the largest off")
sys.exit(0 if largest <= 1e-4 else 1)
PY
  ); then
    echo "FAIL trained-$name: $out"; failed=1; continue
  fi
  echo "ok   trained further in PyTorch, $name: $out"
done

[ "$failed" = 0 ] && echo "all ${#variants[@]} exports pass in PyTorch and come back bit for bit"
exit "$failed"
