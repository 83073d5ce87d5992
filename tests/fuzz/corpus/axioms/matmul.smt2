; Matrix multiplication (TASO Table 2.2).
(assert (! (forall ((x T) (y T) (z T)) (= (matmul x (matmul y z)) (matmul (matmul x y) z))) :named matmul_associative))
(assert (! (forall ((x T) (y T) (w T)) (= (smul (matmul x y) w) (matmul x (smul y w)))) :named matmul_smul))
(assert (! (forall ((x T) (y T) (z T)) (= (matmul x (ewadd y z)) (ewadd (matmul x y) (matmul x z)))) :named matmul_linear))
(assert (! (forall ((x T) (y T)) (= (transpose (matmul x y)) (matmul (transpose y) (transpose x)))) :named matmul_transpose))
(assert (! (forall ((x T) (y T) (z T)) (= (matmul (ewadd x y) z) (ewadd (matmul x z) (matmul y z)))) :named matmul_linear_left))
(assert (! (forall ((x T) (y T) (w T)) (= (smul (matmul x y) w) (matmul (smul x w) y))) :named matmul_smul_left))
