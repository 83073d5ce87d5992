; Matrix transpose (TASO Table 2.2).
(assert (! (forall ((x T)) (= (transpose (transpose x)) x)) :named transpose_involution))
(assert (! (forall ((x T) (y T)) (= (transpose (ewadd x y)) (ewadd (transpose x) (transpose y)))) :named transpose_ewadd))
(assert (! (forall ((x T) (y T)) (= (transpose (ewmul x y)) (ewmul (transpose x) (transpose y)))) :named transpose_ewmul))
(assert (! (forall ((x T) (w T)) (= (smul (transpose x) w) (transpose (smul x w)))) :named transpose_smul))
(assert (! (forall ((x T)) (= (relu (transpose x)) (transpose (relu x)))) :named transpose_relu))
