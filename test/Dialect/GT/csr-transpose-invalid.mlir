// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of gt.csr_transpose (GTOps.cpp and its ODS
// constraints).

func.func @col_idx_rank(%ci: tensor<2x7xi64>) {
  // expected-error @+1 {{col_idx must have rank 1}}
  %a:3 = "gt.csr_transpose"(%ci) <{num_cols = 4 : i64}>
      : (tensor<2x7xi64>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>)
  return
}

// -----

func.func @row_ptr_rank(%ci: tensor<7xi64>, %rp: tensor<1x5xi64>) {
  // expected-error @+1 {{row_ptr must have rank 1}}
  %a:3 = gt.csr_transpose %ci row_ptr(%rp) cols = 4
      : (tensor<7xi64>, tensor<1x5xi64>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>)
  return
}

// -----

func.func @row_ptr_empty(%ci: tensor<7xi64>, %rp: tensor<0xi64>) {
  // expected-error @+1 {{row_ptr must have at least one entry}}
  %a:3 = gt.csr_transpose %ci row_ptr(%rp) cols = 4
      : (tensor<7xi64>, tensor<0xi64>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>)
  return
}

// -----

func.func @negative_cols(%ci: tensor<7xi64>) {
  // expected-error @+1 {{attribute 'num_cols' failed to satisfy constraint}}
  %a:3 = gt.csr_transpose %ci cols = -1
      : (tensor<7xi64>) -> (tensor<0xi64>, tensor<7xi64>, tensor<7xi64>)
  return
}

// -----

func.func @row_ptr_t_size(%ci: tensor<7xi64>) {
  // row_ptr_t must have num_cols + 1 entries.
  // expected-error @+2 {{inferred type(s) 'tensor<5xi64>', 'tensor<7xi64>', 'tensor<7xi64>' are incompatible with return type(s) of operation 'tensor<4xi64>', 'tensor<7xi64>', 'tensor<7xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %a:3 = "gt.csr_transpose"(%ci) <{num_cols = 4 : i64}>
      : (tensor<7xi64>) -> (tensor<4xi64>, tensor<7xi64>, tensor<7xi64>)
  return
}

// -----

func.func @float_indices(%ci: tensor<7xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of signless integer values}}
  %a:3 = gt.csr_transpose %ci cols = 4
      : (tensor<7xf32>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>)
  return
}
