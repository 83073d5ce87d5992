; Grouped convolution, its group count following from the shapes (input channels over
; the kernel's input channels): relu as a separate step, linear in the input and the
; kernel, and regrouping: merging groups `f` at a time into block-diagonal kernels
; computes the same.
(assert (! (forall ((s Int) (p Int) (x T) (y T))
  (= (gconv s p RELU x y) (relu (gconv s p NONE x y)))) :named gconv_relu))
(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))
  (= (gconv s p NONE (ewadd x y) z) (ewadd (gconv s p NONE x z) (gconv s p NONE y z)))) :named gconv_linear_input))
(assert (! (forall ((s Int) (p Int) (x T) (y T) (w T))
  (= (smul (gconv s p NONE x y) w) (gconv s p NONE (smul x w) y))) :named gconv_smul))
(assert (! (forall ((s Int) (p Int) (a Int) (f Int) (x T) (w T))
  (= (gconv s p a x w) (gconv s p a x (mergegroups f w x)))) :named gconv_merge_groups))
; As for dense convolutions: a scalar moves between input and kernel, linear in the
; kernel, kernel enlargement under same padding.
(assert (! (forall ((s Int) (p Int) (c Int) (x T) (y T) (w T))
  (= (gconv s p c (smul x w) y) (gconv s p c x (smul y w)))) :named gconv_smul_moves))
(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))
  (= (gconv s p NONE x (ewadd y z)) (ewadd (gconv s p NONE x y) (gconv s p NONE x z)))) :named gconv_linear_kernel))
(assert (! (forall ((s Int) (c Int) (x T) (y T) (r T))
  (= (gconv s SAME c x y) (gconv s SAME c x (enlarge y r)))) :named gconv_enlarge))
; Merging groups places kernel entries and zeros: linear in the kernel.
(assert (! (forall ((f Int) (w T) (s T) (x T))
  (= (mergegroups f (smul w s) x) (smul (mergegroups f w x) s))) :named mergegroups_smul))
(assert (! (forall ((f Int) (v T) (w T) (x T))
  (= (mergegroups f (ewadd v w) x) (ewadd (mergegroups f v x) (mergegroups f w x)))) :named mergegroups_linear))
; The zeros it places stay zeros under relu and enlargement.
(assert (! (forall ((f Int) (w T) (x T))
  (= (mergegroups f (relu w) x) (relu (mergegroups f w x)))) :named mergegroups_relu))
(assert (! (forall ((f Int) (w T) (x T) (r T))
  (= (mergegroups f (enlarge w r) x) (enlarge (mergegroups f w x) r))) :named mergegroups_enlarge))
