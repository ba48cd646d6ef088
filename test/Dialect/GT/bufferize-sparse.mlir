// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s

// One-shot bufferization of gt.spmm and gt.sparse_attention
// (dialects/GT/GTBufferizableOpInterfaceImpl.cpp): each op becomes an
// allocation of its result and a call to a runtime kernel on identity-layout
// memrefs of dynamic shape,
//   mgrt_spmm_f32(out, row_ptr, col_idx, values, x)
//   mgrt_sparse_attention_f32(out, q, k, v, row_ptr, col_idx, edge_bias,
//                             num_heads, scale, flags)
// with i64 CSR indices: narrower ones are sign-extended into a new buffer by
// an scf.for loop. An absent edge_bias is a 1x1 memref.alloca placeholder
// and flags bit 0 says whether it is present. Each kernel is declared once
// per module, private, with the C interface.

// i64 indices are passed as they are.
// CHECK-LABEL: module
// CHECK-NEXT:    func.func private @mgrt_spmm_f32(memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @spmm_i64
// CHECK-SAME:    (%[[RP:[a-zA-Z0-9_]+]]: memref<5xi64>, %[[CI:[a-zA-Z0-9_]+]]: memref<7xi64>, %[[W:[a-zA-Z0-9_]+]]: memref<7xf32>, %[[X:[a-zA-Z0-9_]+]]: memref<6x8xf32>) -> memref<4x8xf32>
// CHECK-NEXT:    %[[RPD:.+]] = memref.cast %[[RP]] : memref<5xi64> to memref<?xi64>
// CHECK-NEXT:    %[[CID:.+]] = memref.cast %[[CI]] : memref<7xi64> to memref<?xi64>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<4x8xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[WD:.+]] = memref.cast %[[W]] : memref<7xf32> to memref<?xf32>
// CHECK-NEXT:    %[[XD:.+]] = memref.cast %[[X]] : memref<6x8xf32> to memref<?x?xf32>
// CHECK-NEXT:    call @mgrt_spmm_f32(%[[OUTD]], %[[RPD]], %[[CID]], %[[WD]], %[[XD]]) : (memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>) -> ()
// CHECK-NEXT:    return %[[OUT]] : memref<4x8xf32>
// CHECK-NOT:     gt.spmm
func.func @spmm_i64(%rp: tensor<5xi64>, %ci: tensor<7xi64>, %w: tensor<7xf32>,
                    %x: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %0 = gt.spmm %rp, %ci, %w, %x
      : (tensor<5xi64>, tensor<7xi64>, tensor<7xf32>, tensor<6x8xf32>)
      -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// i32 indices are sign-extended into i64 buffers first.
// CHECK-LABEL: func.func @spmm_i32
// CHECK-SAME:    (%[[RP:[a-zA-Z0-9_]+]]: memref<5xi32>, %[[CI:[a-zA-Z0-9_]+]]: memref<7xi32>, %[[W:[a-zA-Z0-9_]+]]: memref<7xf32>, %[[X:[a-zA-Z0-9_]+]]: memref<6x8xf32>) -> memref<4x8xf32>
// CHECK-NEXT:    %[[RP64:.+]] = memref.alloc() : memref<5xi64>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK-NEXT:    scf.for %[[I:.+]] = %[[C0]] to %[[C5]] step %[[C1]] {
// CHECK-NEXT:      %[[N:.+]] = memref.load %[[RP]][%[[I]]] : memref<5xi32>
// CHECK-NEXT:      %[[E:.+]] = arith.extsi %[[N]] : i32 to i64
// CHECK-NEXT:      memref.store %[[E]], %[[RP64]][%[[I]]] : memref<5xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[RPD:.+]] = memref.cast %[[RP64]] : memref<5xi64> to memref<?xi64>
// CHECK-NEXT:    %[[CI64:.+]] = memref.alloc() : memref<7xi64>
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %[[CI]]
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      memref.store %{{.+}}, %[[CI64]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[CID:.+]] = memref.cast %[[CI64]] : memref<7xi64> to memref<?xi64>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]]
// CHECK-NEXT:    %[[WD:.+]] = memref.cast %[[W]]
// CHECK-NEXT:    %[[XD:.+]] = memref.cast %[[X]]
// CHECK-NEXT:    call @mgrt_spmm_f32(%[[OUTD]], %[[RPD]], %[[CID]], %[[WD]], %[[XD]])
// CHECK-NEXT:    return %[[OUT]] : memref<4x8xf32>
func.func @spmm_i32(%rp: tensor<5xi32>, %ci: tensor<7xi32>, %w: tensor<7xf32>,
                    %x: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %0 = gt.spmm %rp, %ci, %w, %x
      : (tensor<5xi32>, tensor<7xi32>, tensor<7xf32>, tensor<6x8xf32>)
      -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Edge bias, i64 indices, default scale 1/sqrt(8/2): flags = 1.
// CHECK-LABEL: module
// CHECK-NEXT:    func.func private @mgrt_sparse_attention_f32(memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?x?xf32>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @sparse_attention_bias
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: memref<4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: memref<6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: memref<6x12xf32>, %[[RP:[a-zA-Z0-9_]+]]: memref<5xi64>, %[[CI:[a-zA-Z0-9_]+]]: memref<7xi64>, %[[B:[a-zA-Z0-9_]+]]: memref<7x2xf32>) -> memref<4x12xf32>
// CHECK-NEXT:    %[[RPD:.+]] = memref.cast %[[RP]] : memref<5xi64> to memref<?xi64>
// CHECK-NEXT:    %[[CID:.+]] = memref.cast %[[CI]] : memref<7xi64> to memref<?xi64>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<4x12xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<4x12xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[Q]] : memref<4x8xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[K]] : memref<6x8xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[VD:.+]] = memref.cast %[[V]] : memref<6x12xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[BD:.+]] = memref.cast %[[B]] : memref<7x2xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[H:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[S:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 1 : i64
// CHECK-NEXT:    call @mgrt_sparse_attention_f32(%[[OUTD]], %[[QD]], %[[KD]], %[[VD]], %[[RPD]], %[[CID]], %[[BD]], %[[H]], %[[S]], %[[F]]) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?x?xf32>, i64, f32, i64) -> ()
// CHECK-NEXT:    return %[[OUT]] : memref<4x12xf32>
// CHECK-NOT:     gt.sparse_attention
func.func @sparse_attention_bias(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                                 %v: tensor<6x12xf32>, %rp: tensor<5xi64>,
                                 %ci: tensor<7xi64>, %b: tensor<7x2xf32>)
    -> tensor<4x12xf32> {
  %0 = gt.sparse_attention %q, %k, %v, %rp, %ci edge_bias(%b) heads = 2
      : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x12xf32>, tensor<5xi64>,
         tensor<7xi64>, tensor<7x2xf32>) -> tensor<4x12xf32>
  return %0 : tensor<4x12xf32>
}

// -----

// No edge bias (1x1 placeholder, flags = 0), i32 indices, the scale
// attribute; two ops share one declaration.
// CHECK-LABEL: module
// CHECK-COUNT-1: func.func private @mgrt_sparse_attention_f32(
// CHECK-NOT:     func.func private @mgrt_sparse_attention_f32(
// CHECK-LABEL: func.func @sparse_attention_i32
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: memref<4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: memref<6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: memref<6x12xf32>, %[[RP:[a-zA-Z0-9_]+]]: memref<5xi32>, %[[CI:[a-zA-Z0-9_]+]]: memref<7xi32>) -> (memref<4x12xf32>, memref<4x12xf32>)
// CHECK-NEXT:    %[[RP64:.+]] = memref.alloc() : memref<5xi64>
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %[[RP]]
// CHECK-NEXT:      arith.extsi %{{.+}} : i32 to i64
// CHECK-NEXT:      memref.store %{{.+}}, %[[RP64]]
// CHECK:         %[[RPD:.+]] = memref.cast %[[RP64]] : memref<5xi64> to memref<?xi64>
// CHECK-NEXT:    %[[CI64:.+]] = memref.alloc() : memref<7xi64>
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %[[CI]]
// CHECK-NEXT:      arith.extsi %{{.+}} : i32 to i64
// CHECK-NEXT:      memref.store %{{.+}}, %[[CI64]]
// CHECK:         %[[CID:.+]] = memref.cast %[[CI64]] : memref<7xi64> to memref<?xi64>
// CHECK-NEXT:    %[[BIAS:.+]] = memref.alloca() : memref<1x1xf32>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<4x12xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]]
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[Q]]
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[K]]
// CHECK-NEXT:    %[[VD:.+]] = memref.cast %[[V]]
// CHECK-NEXT:    %[[BD:.+]] = memref.cast %[[BIAS]] : memref<1x1xf32> to memref<?x?xf32>
// CHECK-NEXT:    %[[H:.+]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[S:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mgrt_sparse_attention_f32(%[[OUTD]], %[[QD]], %[[KD]], %[[VD]], %[[RPD]], %[[CID]], %[[BD]], %[[H]], %[[S]], %[[F]])
// CHECK:         %[[OUT2:.+]] = memref.alloc() : memref<4x12xf32>
// CHECK:         %[[H2:.+]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[S2:.+]] = arith.constant 0.353553385 : f32
// CHECK-NEXT:    %[[F2:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mgrt_sparse_attention_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[H2]], %[[S2]], %[[F2]])
// CHECK-NEXT:    return %[[OUT]], %[[OUT2]] : memref<4x12xf32>, memref<4x12xf32>
func.func @sparse_attention_i32(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                                %v: tensor<6x12xf32>, %rp: tensor<5xi32>,
                                %ci: tensor<7xi32>)
    -> (tensor<4x12xf32>, tensor<4x12xf32>) {
  %0 = gt.sparse_attention %q, %k, %v, %rp, %ci heads = 4 {scale = 0.25 : f32}
      : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x12xf32>, tensor<5xi32>,
         tensor<7xi32>) -> tensor<4x12xf32>
  %1 = gt.sparse_attention %q, %k, %v, %rp, %ci heads = 1
      : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x12xf32>, tensor<5xi32>,
         tensor<7xi32>) -> tensor<4x12xf32>
  return %0, %1 : tensor<4x12xf32>, tensor<4x12xf32>
}

// -----

// A strided value operand (a row block of a larger tensor) is copied to an
// identity layout before the cast.
// CHECK-LABEL: func.func @spmm_strided_input
// CHECK:         %[[SV:.+]] = memref.subview
// CHECK:         %[[XC:.+]] = memref.alloc() : memref<6x4xf32>
// CHECK-NEXT:    memref.copy %[[SV]], %[[XC]]
// CHECK-NEXT:    %[[XD:.+]] = memref.cast %[[XC]] : memref<6x4xf32> to memref<?x?xf32>
// CHECK-NEXT:    call @mgrt_spmm_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[XD]])
func.func @spmm_strided_input(%rp: tensor<5xi64>, %ci: tensor<7xi64>,
                              %w: tensor<7xf32>, %xx: tensor<6x8xf32>)
    -> tensor<4x4xf32> {
  %x = tensor.extract_slice %xx[0, 2] [6, 4] [1, 1]
      : tensor<6x8xf32> to tensor<6x4xf32>
  %0 = gt.spmm %rp, %ci, %w, %x
      : (tensor<5xi64>, tensor<7xi64>, tensor<7xf32>, tensor<6x4xf32>)
      -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
