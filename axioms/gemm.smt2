; A product with a bias (Gemm, alpha = beta = 1, A as it is): B transposed is the
; transpose as an operand; the product is linear in B, the bias added once; a product
; feeding A re-associates onto B; a scalar moves between A and B; A's columns and B's
; rows concatenated make a sum of products; rows of A concatenated give rows of Y; B's
; columns concatenated, with their biases, give columns of Y (two layers merged); two
; layers on different inputs are one product of the inputs joined by columns and the
; weights on a block diagonal, whose transpose is the transposes' block diagonal.
(assert (! (forall ((x T) (w T) (c T))
  (= (gemm 1 x w c) (gemm 0 x (transpose w) c))) :named gemm_transposed))
(assert (! (forall ((x T) (w T) (v T) (c T))
  (= (ewadd (gemm 0 x w c) (matmul x v)) (gemm 0 x (ewadd w v) c))) :named gemm_linear))
(assert (! (forall ((x T) (y T) (w T) (c T))
  (= (gemm 0 (matmul x y) w c) (gemm 0 x (matmul y w) c))) :named gemm_associative))
(assert (! (forall ((x T) (w T) (s T) (c T))
  (= (gemm 0 (smul x s) w c) (gemm 0 x (smul w s) c))) :named gemm_smul_moves))
(assert (! (forall ((x T) (y T) (v T) (w T) (c T))
  (= (gemm 0 (concat 1 x y) (concat 0 v w) c) (ewadd (gemm 0 x v c) (matmul y w)))) :named gemm_concat_inner))
(assert (! (forall ((x T) (y T) (w T) (c T))
  (= (gemm 0 (concat 0 x y) w c) (concat 0 (gemm 0 x w c) (gemm 0 y w c)))) :named gemm_concat_rows))
(assert (! (forall ((x T) (v T) (w T) (b T) (c T))
  (= (gemm 0 x (concat 1 v w) (concat 0 b c)) (concat 1 (gemm 0 x v b) (gemm 0 x w c)))) :named gemm_concat_columns))
(assert (! (forall ((x T) (y T) (v T) (w T) (b T) (c T))
  (= (gemm 0 (concat 1 x y) (blockdiag v w) (concat 0 b c)) (concat 1 (gemm 0 x v b) (gemm 0 y w c)))) :named gemm_blockdiag))
(assert (! (forall ((v T) (w T))
  (= (transpose (blockdiag v w)) (blockdiag (transpose v) (transpose w)))) :named blockdiag_transpose))
