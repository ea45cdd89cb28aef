#!/bin/sh
# make-model --force never deletes a file it did not write (issue 27): it replaces only a folder
# whose config.json carries make-model's marker and that holds nothing but make-model's files;
# the old folder moves aside and comes back when the new one cannot take its place.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
expect_exit "make-model writes a folder" 0 npu-replay make-model --preset tiny -o m
expect_grep "config.json carries the marker" '"calculet_generated_by": "npu-replay make-model"' m/config.json
expect_exit "an existing folder without --force exits 2" 2 npu-replay make-model --preset tiny -o m
h0=$(sha256sum m/model.safetensors | cut -d' ' -f1)
expect_exit "--force replaces its own folder" 0 npu-replay make-model --preset tiny --seed 7 --force -o m
if [ "$(sha256sum m/model.safetensors | cut -d' ' -f1)" != "$h0" ]; then ok "the replacement is the new model (seed 7)"
else notok "the replacement is the new model (seed 7)" "same weights as seed 0"; fi
echo "keep me" > m/notes.txt
h=$(sha256sum m/model.safetensors | cut -d' ' -f1)
expect_exit "--force refuses a folder holding a file it did not write" 2 npu-replay make-model --preset tiny --seed 8 --force -o m
expect_grep "the refusal names the file" 'm/notes\.txt: is not a file make-model writes' err.txt
if [ "$(cat m/notes.txt)" = "keep me" ] && [ "$(sha256sum m/model.safetensors | cut -d' ' -f1)" = "$h" ]; then
    ok "the folder is left as it was"; else notok "the folder is left as it was"; fi
rm m/notes.txt
mkdir real
echo '{"model_type": "qwen3_moe", "hidden_size": 2048}' > real/config.json
echo "weights" > real/model.safetensors
expect_exit "--force refuses a model folder make-model did not write" 2 npu-replay make-model --preset tiny --force -o real
expect_grep "the refusal says why" 'was not written by make-model' err.txt
if [ "$(cat real/model.safetensors)" = "weights" ]; then ok "the user's weights are kept"; else notok "the user's weights are kept"; fi
echo x > plain
expect_exit "--force refuses a regular file as the folder" 2 npu-replay make-model --preset tiny --force -o plain
if [ "$(cat plain)" = "x" ]; then ok "the file is kept"; else notok "the file is kept"; fi
left=$(ls -a | grep -c '\.old-\|\.tmp-')
if [ "$left" -eq 0 ]; then ok "nothing left beside"; else notok "nothing left beside" "$(ls -a)"; fi
