//! Arenas: a list of the file's functions, launches, pragmas or sites,
//! indexed only by its own id type, so that an index of one list cannot be
//! used for another.

/// `arena!(Functions, FunctionId, Function, "...")` defines the id (a
/// `Copy` index that prints as `FunctionId(3)`, also in `{:#?}`) and the
/// list (built from a `Vec`, indexed by the id only, printed as the list it
/// is).
macro_rules! arena {
    ($(#[$list_doc:meta])* $list:ident, $(#[$id_doc:meta])* $id:ident, $item:ty) => {
        $(#[$id_doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $id(pub usize);

        impl std::fmt::Debug for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({})", stringify!($id), self.0)
            }
        }

        $(#[$list_doc])*
        #[derive(Clone, Default)]
        pub struct $list(Vec<$item>);

        #[allow(dead_code)]
        impl $list {
            pub fn new(items: Vec<$item>) -> $list {
                $list(items)
            }

            pub fn iter(&self) -> std::slice::Iter<'_, $item> {
                self.0.iter()
            }

            pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, $item> {
                self.0.iter_mut()
            }

            /// Every item with its id.
            pub fn with_ids(&self) -> impl Iterator<Item = ($id, &$item)> {
                self.0.iter().enumerate().map(|(i, x)| ($id(i), x))
            }

            pub fn ids(&self) -> impl Iterator<Item = $id> {
                (0..self.0.len()).map($id)
            }

            pub fn push(&mut self, item: $item) -> $id {
                self.0.push(item);
                $id(self.0.len() - 1)
            }

            pub fn len(&self) -> usize {
                self.0.len()
            }

            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }

            pub fn as_slice(&self) -> &[$item] {
                &self.0
            }

            /// The id of the item whose key is `key`, in a list sorted by it.
            pub fn binary_search_by_key<B: Ord>(
                &self,
                key: &B,
                f: impl FnMut(&$item) -> B,
            ) -> Result<$id, usize> {
                self.0.binary_search_by_key(key, f).map($id)
            }

            pub fn retain(&mut self, keep: impl FnMut(&$item) -> bool) {
                self.0.retain(keep)
            }
        }

        impl std::ops::Index<$id> for $list {
            type Output = $item;

            fn index(&self, id: $id) -> &$item {
                &self.0[id.0]
            }
        }

        impl std::ops::IndexMut<$id> for $list {
            fn index_mut(&mut self, id: $id) -> &mut $item {
                &mut self.0[id.0]
            }
        }

        impl std::fmt::Debug for $list {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl<'a> IntoIterator for &'a $list {
            type Item = &'a $item;
            type IntoIter = std::slice::Iter<'a, $item>;

            fn into_iter(self) -> Self::IntoIter {
                self.0.iter()
            }
        }
    };
}

pub(crate) use arena;
