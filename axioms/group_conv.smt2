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
