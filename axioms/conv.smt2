; Convolution (TASO Table 2.2): bilinear without activation, relu as a separate step,
; kernel enlargement under same padding.
(assert (! (forall ((s Int) (p Int) (c Int) (x T) (y T) (w T))
  (= (conv s p c (smul x w) y) (conv s p c x (smul y w)))) :named conv_smul_moves))
(assert (! (forall ((s Int) (p Int) (x T) (y T) (w T))
  (= (smul (conv s p NONE x y) w) (conv s p NONE (smul x w) y))) :named conv_smul))
(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))
  (= (conv s p NONE x (ewadd y z)) (ewadd (conv s p NONE x y) (conv s p NONE x z)))) :named conv_linear_kernel))
(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))
  (= (conv s p NONE (ewadd x y) z) (ewadd (conv s p NONE x z) (conv s p NONE y z)))) :named conv_linear_input))
(assert (! (forall ((s Int) (c Int) (x T) (y T) (r T))
  (= (conv s SAME c x y) (conv s SAME c x (enlarge y r)))) :named conv_enlarge))
(assert (! (forall ((s Int) (p Int) (x T) (y T))
  (= (conv s p RELU x y) (relu (conv s p NONE x y)))) :named conv_relu))
