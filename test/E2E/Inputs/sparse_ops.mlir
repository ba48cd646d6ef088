// The model of sparse_ops.test (checked by sparse_ops_check.py, which holds
// the graphs: row_ptr / col_idx [11] / [26] with empty rows and duplicate
// edges, and row_ptr2 / col_idx2 [5] / [10] of 4 query nodes over 10 keys).
//   agg  = spmm(i32 CSR, w, x)
//   att  = sparse_attention(x, x, agg, i64 CSR, edge_bias eb, 4 heads)
//   att2 = sparse_attention(q2, k2, x, i32 CSR, 2 heads, scale 0.3)
func.func @main(%x: tensor<10x16xf32> {gt.name = "x"},
                %w: tensor<26xf32> {gt.name = "w"},
                %rp: tensor<11xi64> {gt.name = "row_ptr"},
                %ci: tensor<26xi64> {gt.name = "col_idx"},
                %rp32: tensor<11xi32> {gt.name = "row_ptr32"},
                %ci32: tensor<26xi32> {gt.name = "col_idx32"},
                %eb: tensor<26x4xf32> {gt.name = "eb"},
                %q2: tensor<4x8xf32> {gt.name = "q2"},
                %k2: tensor<10x8xf32> {gt.name = "k2"},
                %rp2: tensor<5xi32> {gt.name = "row_ptr2"},
                %ci2: tensor<10xi32> {gt.name = "col_idx2"})
    -> (tensor<10x16xf32> {gt.name = "agg"},
        tensor<10x16xf32> {gt.name = "att"},
        tensor<4x16xf32> {gt.name = "att2"}) {
  %agg = gt.spmm %rp32, %ci32, %w, %x
      : (tensor<11xi32>, tensor<26xi32>, tensor<26xf32>, tensor<10x16xf32>)
      -> tensor<10x16xf32>
  %att = gt.sparse_attention %x, %x, %agg, %rp, %ci edge_bias(%eb) heads = 4
      : (tensor<10x16xf32>, tensor<10x16xf32>, tensor<10x16xf32>,
         tensor<11xi64>, tensor<26xi64>, tensor<26x4xf32>) -> tensor<10x16xf32>
  %att2 = gt.sparse_attention %q2, %k2, %x, %rp2, %ci2 heads = 2 {scale = 0.3 : f32}
      : (tensor<4x8xf32>, tensor<10x8xf32>, tensor<10x16xf32>, tensor<5xi32>,
         tensor<10xi32>) -> tensor<4x16xf32>
  return %agg, %att, %att2 : tensor<10x16xf32>, tensor<10x16xf32>, tensor<4x16xf32>
}
