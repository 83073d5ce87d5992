; The constant tensors: pooling kernels and identities (TASO Table 2.2). Their shape
; comes from a shape-source input.
(assert (! (forall ((k Int) (s Int) (p Int) (x T) (r T))
  (= (dconv s p NONE x (cpool k r)) (poolavg k s p x))) :named pool_as_conv))
(assert (! (forall ((k Int) (x T) (r T)) (= (conv 1 SAME NONE x (iconv k r)) x)) :named iconv_identity))
(assert (! (forall ((x T) (r T)) (= (matmul x (imatmul r)) x)) :named imatmul_identity))
(assert (! (forall ((x T) (w T)) (= (smul x (iewmul w)) x)) :named iewmul_scalar_identity))
(assert (! (forall ((x T) (r T)) (= (matmul (imatmul r) x) x)) :named imatmul_left_identity))
; An identity kernel with a stride picks every s-th pixel of a convolution with stride 1.
(assert (! (forall ((s Int) (p Int) (c Int) (k Int) (x T) (w T) (r T))
  (= (conv s SAME NONE (conv 1 p c x w) (iconv k r)) (conv s p c x w))) :named iconv_after_conv))
(assert (! (forall ((s Int) (p Int) (c Int) (k Int) (x T) (w T) (r T))
  (= (conv s SAME c (conv 1 p NONE x w) (iconv k r)) (conv s p c x w))) :named iconv_after_conv_activation))
(assert (! (forall ((a Int) (x T) (y T)) (= (iewmul (concat a x y)) (concat a (iewmul x) (iewmul y)))) :named iewmul_concat))
; Rules use the constants with shape sources other than the tensor they meet; the
; element-wise operators take inputs of one shape, so the ones tensor is the right one.
(assert (! (forall ((x T) (y T)) (= (ewmul y (iewmul x)) y)) :named iewmul_any_source))
; An identity kernel only crops and subsamples, which commutes with relu and turns a
; stride-1 pooling into a strided or unpadded one.
(assert (! (forall ((s Int) (p Int) (k Int) (x T) (r T))
  (= (conv s p NONE (relu x) (iconv k r)) (relu (conv s p NONE x (iconv k r))))) :named iconv_relu))
(assert (! (forall ((s Int) (p Int) (k Int) (x T) (r T))
  (= (conv s p NONE (poolavg k 1 SAME x) (iconv k r)) (poolavg k s p x))) :named iconv_after_poolavg))
(assert (! (forall ((s Int) (p Int) (k Int) (x T) (r T))
  (= (conv s p NONE (poolmax k 1 SAME x) (iconv k r)) (poolmax k s p x))) :named iconv_after_poolmax))
