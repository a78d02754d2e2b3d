//! placeholder
pub mod timers;
pub struct Directory;
impl Directory {
    pub fn id_of(&self, _n: &str) -> Option<usize> { None }
    pub fn name_of(&self, _id: usize) -> &str { "" }
    pub fn resource(&self) -> usize { 0 }
}
