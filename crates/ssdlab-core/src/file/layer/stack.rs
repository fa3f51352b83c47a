//! The adapters that put the file layer between the job runner and the block layer.

use super::*;

/// The job runner's view of what is below it when a file layer is in the stack: raw bios
/// pass through, file operations go to the file layer.
pub struct Lower<'a, D> {
    pub files: &'a mut FileLayer,
    pub block: &'a mut BlockLayer<D>,
}

impl<D: BlockDevice, E> Submit<E> for Lower<'_, D>
where
    E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
{
    fn submit(&mut self, bio: Bio, at: Time, events: &mut EventQueue<E>) {
        self.files.pass(bio, at, self.block, events);
    }
    fn plug(&mut self, bio: Bio) -> usize {
        self.files.pass_plugged(bio, self.block)
    }
    fn unplug(&mut self, at: Time, events: &mut EventQueue<E>) {
        self.block.unplug(at, events);
    }
    fn flush(&mut self, events: &mut EventQueue<E>) {
        Submit::<E>::flush(self.block, events);
    }
    fn submit_file(&mut self, io: FileIo, at: Time, events: &mut EventQueue<E>) {
        self.files.submit_file(io, at, events);
    }
}

/// What the block layer talks to when a file layer is in the stack: completions go to the
/// file layer, which passes the job runner's own on.
pub struct Up<'a, H> {
    pub files: &'a mut FileLayer,
    pub host: &'a mut H,
}

impl<E, H: FileUpper<E> + BioDone<E>> BioDone<E> for Up<'_, H> {
    fn bio_done(&mut self, bio: &Bio, events: &mut EventQueue<E>) -> Option<u32> {
        self.files.bio_done(bio, events, self.host)
    }
}

impl<D, E, H> Upper<BlockLayer<D>, E> for Up<'_, H>
where
    D: BlockDevice,
    E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    H: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
{
    fn resume(&mut self, waiter: u32, lower: &mut BlockLayer<D>, events: &mut EventQueue<E>) {
        self.files.resume(waiter, lower, events, self.host);
    }
}
