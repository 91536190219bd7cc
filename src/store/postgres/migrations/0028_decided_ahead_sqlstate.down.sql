DROP FUNCTION oo_assert_unmoved(boolean, text);
