fn main() {
    println!("{}", std::env::var("CARGO").unwrap_or_default());
}
