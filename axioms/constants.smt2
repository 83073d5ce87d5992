; The constant tensors: pooling kernels and identities (TASO Table 2.2). Their shape
; comes from a shape-source input.
(assert (! (forall ((k Int) (s Int) (p Int) (x T) (r T))
  (= (conv s p NONE x (cpool k r)) (poolavg k s p x))) :named pool_as_conv))
(assert (! (forall ((k Int) (x T) (r T)) (= (conv 1 SAME NONE x (iconv k r)) x)) :named iconv_identity))
(assert (! (forall ((x T) (r T)) (= (matmul x (imatmul r)) x)) :named imatmul_identity))
(assert (! (forall ((x T)) (= (ewmul x (iewmul x)) x)) :named iewmul_identity))
(assert (! (forall ((x T) (w T)) (= (smul x (iewmul w)) x)) :named iewmul_scalar_identity))
(assert (! (forall ((x T) (r T)) (= (matmul (imatmul r) x) x)) :named imatmul_left_identity))
; An identity kernel with a stride picks every s-th pixel of a same-padded convolution.
(assert (! (forall ((s Int) (c Int) (k Int) (x T) (w T) (r T))
  (= (conv s SAME NONE (conv 1 SAME c x w) (iconv k r)) (conv s SAME c x w))) :named iconv_after_conv))
