python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1 POREP_PROVER_BUILD_JOBS=16 POREP_PROVER_PARAMS_CACHE=/tmp/pc
timeout 200 python3 -m pip install --no-build-isolation --no-deps -e . ./plugins/porep-prover-porep-shaped > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
timeout 150 python3 -m pytest -q -x -m gpu tests/test_gpu.py -k "products_match or squares or sums_of" -p no:cacheprovider 2>&1 | tail -4
timeout 60 python3 -m pytest -q -x -m gpu tests/test_gpu_msm.py -k "variants" -p no:cacheprovider 2>&1 | tail -3
timeout 60 python3 benchmarks/bench_gpu.py --sections field --reps 5 2>&1 | grep -v "^|---" | tee $OUT/field.txt
timeout 200 python3 benchmarks/bench_gpu.py --sections msm_variants --variants ",kara,kara_w" --min-log 22 --max-log 24 --reps 3 2>&1 | tee $OUT/msm.txt
