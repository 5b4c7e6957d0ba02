CREATE TABLE IF NOT EXISTS test_backend_ops (
  test_time TEXT,
  build_commit TEXT,
  backend_name TEXT,
  op_name TEXT,
  op_params TEXT,
  test_mode TEXT,
  supported INTEGER,
  passed INTEGER,
  error_message TEXT,
  time_us REAL,
  flops REAL,
  bandwidth_gb_s REAL,
  memory_kb INTEGER,
  n_runs INTEGER,
  device_description TEXT,
  backend_reg_name TEXT
);
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:00Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048', 'perf', 1, 1, '', 1118.000000, 720309810375.670898, 0.000000, 0, 1000, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:00Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=64,k=2048', 'perf', 1, 1, '', 1293.400000, 1245254937374.362061, 0.000000, 0, 819, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:00Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=128,k=2048', 'perf', 1, 1, '', 1387.200000, 2322106020761.246094, 0.000000, 0, 736, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:00Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=256,k=2048', 'perf', 1, 1, '', 1514.500000, 4253846777154.176270, 0.000000, 0, 672, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:00Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=512,k=2048', 'perf', 1, 1, '', 2033.500000, 6336317623801.329102, 0.000000, 0, 496, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:01Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=nvfp4,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048', 'perf', 0, 0, 'not supported', 0, 0, 0, 0, 0, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:02Z', 'd99724f', 'MTL0', 'ADD', 'type=f32,ne=[4096,512,1,1],nr=[1,1,1,1],nf=1', 'perf', 1, 1, '', 35.500000, 0, 2836.460000, 24576, 24577, 'Apple M5', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2026-08-22T10:00:03Z', 'd99724f', 'MTL0', 'MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=32,n_used=2,b=0,m=2880,n=32,k=2880', 'test', 1, 0, 'ERR = 0.000612345 > 0.000500000', 0, 0, 0, 0, 0, 'Apple M5', 'Metal');
